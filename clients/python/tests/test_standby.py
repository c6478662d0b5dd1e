"""Following the leader of a high-availability group (PROTOCOL.md, "Standby hosts"), at the
protocol level: no etcd, no group of Swift hosts. A standby is faked with a ROUTER that
refuses every hello ``NOT_LEADER`` (``FakeStandby`` below), a leader that loses its lease
with ``FakeHost.lose_leadership``; the leader they name is a real ``statebus host`` started
by the ``system`` fixture; a leader that lost etcd with ``FakeHost.lose_etcd``. Also the
endpoint list's rule itself (``_endpoints.py``) and the search for the leader (``_leader.py``).
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import threading
import time
from typing import Any, Awaitable, Callable

import pytest
import zmq

import statebus
from conftest import DEADLINE, System
from fakehost import FakeHost
from statebus._endpoints import ControlEndpoints
from statebus._leader import find_leader
from statebus._wire import pb

COUNTER = ("--object", "Counter", "--property", "count:int=0", "--property", "label:string=start")


def run(test: Callable[[], Awaitable[Any]]) -> Any:
    """Runs an async test body with an overall deadline."""
    return asyncio.run(asyncio.wait_for(test(), DEADLINE * 2))


class FakeStandby:
    """A standby as a view sees one: every hello and snapshot request is refused
    ``NOT_LEADER`` naming ``leader`` ("" for none), every write refused ``NOT_LEADER``;
    pings are answered. Records when each hello came. Serves from a thread of its own;
    use it with ``with`` so that it stops."""

    def __init__(self, endpoint: str, leader: str) -> None:
        self.endpoint, self.leader = endpoint, leader
        self.hellos: list[float] = []  # time.monotonic() of each hello
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._router = zmq.Context.instance().socket(zmq.ROUTER)
        self._router.setsockopt(zmq.LINGER, 0)
        self._router.bind(endpoint)
        self._thread = threading.Thread(target=self._run, daemon=True)  # the socket is the thread's from now on
        self._thread.start()

    def __enter__(self) -> "FakeStandby":
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def wait_for_hellos(self, count: int) -> list[float]:
        """Blocks until ``count`` hellos came (at most ``DEADLINE`` seconds); returns their times."""
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.hellos) >= count, DEADLINE), f"{len(self.hellos)} hellos, not {count}"
            return list(self.hellos)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if not self._router.poll(10):
                    continue
                identity, frame = self._router.recv_multipart()
                request = pb.Request.FromString(frame)
                body = request.WhichOneof("body")
                reply = pb.Reply(protocol_version=request.protocol_version, request_id=request.request_id)
                refusal = pb.Error(code=pb.ERROR_CODE_NOT_LEADER, message="this host is a standby of its high-availability group")
                if body == "hello":
                    with self._changed:
                        self.hellos.append(time.monotonic())
                        self._changed.notify_all()
                if body in ("hello", "snapshot"):
                    refusal.leader_control = self.leader
                    reply.error.CopyFrom(refusal)
                elif body == "write":
                    reply.write_reply.CopyFrom(pb.WriteReply(write_id=request.write.write_id, rejection=refusal))
                elif body == "ping":
                    reply.pong.CopyFrom(pb.Pong(epoch=1))
                else:
                    continue
                self._router.send_multipart([identity, reply.SerializeToString()])
        finally:
            self._router.close(0)


class LogWatch(logging.Handler):
    """A logger of its own for one view, whose messages the test can wait for: the view's
    decisions that change nothing visible (staying on its host) show only there."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.logger = logging.getLogger(f"statebus.test.{id(self)}")
        self.logger.setLevel(logging.DEBUG)
        self.logger.propagate = False
        self.logger.addHandler(self)
        self.messages: list[str] = []
        self._logged: asyncio.Event | None = None

    def emit(self, record: logging.LogRecord) -> None:  # on the view's loop, which is the test's
        self.messages.append(record.getMessage())
        if self._logged is not None:
            self._logged.set()

    async def wait_for(self, words: str, count: int = 1) -> None:
        """Waits until ``count`` messages contain ``words`` (at most ``DEADLINE`` seconds)."""
        deadline = time.monotonic() + DEADLINE
        self._logged = asyncio.Event()
        while sum(words in message for message in self.messages) < count:
            self._logged.clear()
            left = deadline - time.monotonic()
            assert left > 0, f"no {count} messages with {words!r} within {DEADLINE:g} s: {self.messages}"
            try:
                await asyncio.wait_for(self._logged.wait(), left)
            except asyncio.TimeoutError:
                pass


def probe_socket(kind: int) -> zmq.Socket:  # type: ignore[type-arg]
    socket = zmq.Context.instance().socket(kind)
    socket.setsockopt(zmq.LINGER, 0)
    return socket


# ============================================================================ against a host


@pytest.mark.host
@pytest.mark.parametrize("listed", ["standby,host", "standby"])
def test_the_view_follows_the_leader_a_standby_names(system: System, listed: str) -> None:
    host = system.host(*COUNTER)
    leader = host.ready["control"]
    with FakeStandby(system.endpoint("standby"), leader=leader) as standby:
        control = ",".join({"standby": standby.endpoint, "host": leader}[name] for name in listed.split(","))

        async def body() -> None:
            async with statebus.connect(control, object="Counter", timeout=DEADLINE) as counter:
                assert counter.live and counter.control_endpoint == leader  # listed or not
                assert counter.control_endpoints == tuple(control.split(","))
                assert counter.epoch == int(host.ready["epoch"]) and counter.last_error is None
                assert await counter.set(count=3) == 1 and counter.confirmed("count") == 3
        run(body)
        assert len(standby.hellos) == 1  # refused once, then the leader


@pytest.mark.host
def test_a_standby_that_names_no_leader_is_asked_again_then_the_next_endpoint(system: System) -> None:
    host = system.host(*COUNTER)
    with FakeStandby(system.endpoint("standby"), leader="") as standby:

        async def body() -> None:
            async with statebus.connect([standby.endpoint, host.ready["control"]], object="Counter", timeout=DEADLINE) as counter:
                assert counter.live and counter.control_endpoint == host.ready["control"]
                assert counter.last_error is None  # a welcome ends the refusals
        run(body)
        hellos = standby.hellos
    assert len(hellos) == 4, "asked 4 times in a row, then the next endpoint"
    pauses = [later - earlier for earlier, later in zip(hellos, hellos[1:])]
    assert all(pause >= least for pause, least in zip(pauses, (0.02, 0.045, 0.095))), pauses  # 25 ms, doubling


@pytest.mark.host
def test_a_write_refused_not_leader_goes_again_to_the_leader(system: System) -> None:
    host = system.host(*COUNTER)
    leader = host.ready["control"]
    fake = FakeHost(system.folder, "Counter", {"count": 0, "label": "start"})
    try:
        async def body() -> None:
            async with statebus.connect([fake.control, leader], object="Counter", timeout=DEADLINE) as counter:
                assert counter.epoch == fake.epoch and counter.control_endpoint == fake.control
                fake.lose_leadership(leader)  # its lease ran out: another host leads
                written = counter.set(count=5)
                assert counter.count == 5  # shown at once, as ever
                sequence = await asyncio.wait_for(written, DEADLINE)  # not failed: sent again to the leader
                assert counter.control_endpoint == leader and counter.epoch == int(host.ready["epoch"])
                assert sequence == 1 and counter.confirmed("count") == 5 and counter.pending_writes == 0
            async with statebus.connect(leader, object="Counter", timeout=DEADLINE) as other:
                assert other.count == 5 and other.sequence == 1  # applied once
        run(body)
        assert len(fake.writes_seen) == 1 and fake.applied == []  # refused there, not applied
    finally:
        fake.close()


@pytest.mark.host
def test_a_silent_host_is_left_for_the_next_endpoint(system: System) -> None:
    host = system.host(*COUNTER)
    leader = host.ready["control"]
    fake = FakeHost(system.folder, "Counter", {"count": 0, "label": "start"}, heartbeat_ms=100)
    try:
        async def body() -> None:
            async with statebus.connect(f"{fake.control},{leader}", object="Counter", timeout=DEADLINE) as counter:
                assert counter.control_endpoint == fake.control

                def fall_silent() -> None:
                    # No more heartbeats; and should the view come back (a slow welcome from
                    # the leader on a busy machine), a refusal sends it on again.
                    fake.heartbeat_ms, fake.leader = 0, ""
                fake.do(fall_silent)
                await counter.wait_for(lambda c: c.live and c.epoch == int(host.ready["epoch"]), DEADLINE)
                assert counter.control_endpoint == leader and counter.rejoins >= 1
        run(body)
    finally:
        fake.close()


@pytest.mark.host
def test_a_hello_lost_with_its_connection_is_said_again_when_it_comes_back(system: System, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule 5: a standby that takes the lead binds its endpoint anew, and a hello it read and
    never answered is lost with its old socket. A bare ROUTER reads the view's hello and
    closes; a host then binds the same endpoint. The view waits 60 s for a welcome here, so
    only a hello said again when its connection comes back joins within the test's deadline
    (and without leaving for the other, empty, endpoint)."""
    monkeypatch.setattr(statebus._engine, "_REQUEST_TIMEOUT", 60.0)
    endpoint = system.endpoint("lost")
    stand_in = zmq.Context.instance().socket(zmq.ROUTER)
    stand_in.setsockopt(zmq.LINGER, 0)
    stand_in.setsockopt(zmq.RCVTIMEO, int(DEADLINE * 1000))
    stand_in.bind(endpoint)

    async def body() -> None:
        async def join() -> tuple[int, int]:
            async with statebus.connect([endpoint, system.endpoint("other")], object="Counter", timeout=DEADLINE) as counter:
                return counter.epoch, counter.rejoins
        joining = asyncio.ensure_future(join())
        try:
            hello = await asyncio.to_thread(stand_in.recv_multipart)  # the view's routing id, then its hello
            assert len(hello) == 2
        finally:
            stand_in.close()
        host = await asyncio.to_thread(system.host, *COUNTER, control=endpoint)
        epoch, rejoins = await joining
        assert epoch == int(host.ready["epoch"]) and rejoins == 0
    run(body)


@pytest.mark.host
def test_a_write_refused_persistence_failed_fails_and_the_view_joins_the_leader(system: System) -> None:
    host = system.host(*COUNTER)
    leader = host.ready["control"]
    fake = FakeHost(system.folder, "Counter", {"count": 0, "label": "start"})
    try:
        async def body() -> None:
            async with statebus.connect([fake.control, leader], object="Counter", timeout=DEADLINE) as counter:
                assert counter.epoch == fake.epoch and counter.control_endpoint == fake.control
                fake.lose_etcd()  # read-only now, while the real host leads the group
                written = counter.set(count=5)
                with pytest.raises(statebus.PersistenceFailedError, match="etcd"):
                    await asyncio.wait_for(written, DEADLINE)  # fails as before: not applied
                await counter.wait_for(lambda c: c.live and c.control_endpoint == leader, DEADLINE)
                assert counter.epoch == int(host.ready["epoch"]) and counter.rejoins == 1
                assert counter.control_endpoints == (fake.control, leader)
                assert await asyncio.wait_for(counter.set(count=6), DEADLINE) == 1 and counter.confirmed("count") == 6
            async with statebus.connect(leader, object="Counter", timeout=DEADLINE) as other:
                assert other.count == 6 and other.sequence == 1  # the refused write went nowhere
        run(body)
        assert len(fake.writes_seen) == 1 and fake.applied == []
    finally:
        fake.close()


# ============================================================================ no host needed


def test_a_write_refused_persistence_failed_stays_when_only_standbys_are_elsewhere() -> None:
    with tempfile.TemporaryDirectory() as folder:
        fake = FakeHost(folder, "Counter", {"count": 0, "label": "start"})
        try:
            with FakeStandby(f"ipc://{folder}/a.control", leader="") as a, \
                    FakeStandby(f"ipc://{folder}/b.control", leader=fake.control) as b:
                log = LogWatch()

                async def body() -> None:
                    listed = [fake.control, a.endpoint, b.endpoint]
                    async with statebus.connect(listed, object="Counter", timeout=DEADLINE, logger=log.logger) as counter:
                        assert counter.control_endpoint == fake.control and (a.hellos, b.hellos) == ([], [])
                        fake.lose_etcd()
                        with pytest.raises(statebus.PersistenceFailedError):
                            await asyncio.wait_for(counter.set(count=5), DEADLINE)
                        await log.wait_for("staying on")  # both refused NOT_LEADER: no leader elsewhere
                        assert (len(a.hellos), len(b.hellos)) == (1, 1)  # asked once each
                        assert counter.live and counter.control_endpoint == fake.control and counter.rejoins == 0
                        assert counter.count == 0 and counter.pending_writes == 0
                        fake.change("label", "still here")  # live on its host: its runs arrive
                        await counter.wait_for(lambda c: c.label == "still here", DEADLINE)
                        # The next refused write asks again: the first search has ended.
                        with pytest.raises(statebus.PersistenceFailedError):
                            await asyncio.wait_for(counter.set(count=6), DEADLINE)
                        await log.wait_for("staying on", count=2)
                        assert (len(a.hellos), len(b.hellos)) == (2, 2) and counter.control_endpoint == fake.control
                run(body)
                assert len(fake.writes_seen) == 2 and fake.applied == []
        finally:
            fake.close()


def test_the_search_takes_the_endpoint_that_welcomes_and_not_a_standby() -> None:
    with tempfile.TemporaryDirectory() as folder:
        fake = FakeHost(folder, "Counter", {"count": 0})
        try:
            with FakeStandby(f"ipc://{folder}/a.control", leader=fake.control) as a:
                async def body() -> None:
                    assert await find_leader([a.endpoint, fake.control], probe_socket, DEADLINE) == fake.control
                    # Standbys only: none, as soon as all have answered (well within the timeout).
                    started = time.monotonic()
                    assert await find_leader([a.endpoint], probe_socket, DEADLINE) is None
                    assert time.monotonic() - started < DEADLINE / 2
                    # Nobody there: none, once the timeout passed.
                    assert await find_leader([f"ipc://{folder}/nobody.control"], probe_socket, 0.2) is None
                    assert await find_leader([], probe_socket, DEADLINE) is None
                run(body)
                assert len(a.hellos) == 2
            assert fake.writes_seen == []
        finally:
            fake.close()


def test_the_rule_uses_the_leader_a_search_found() -> None:
    endpoints = ControlEndpoints.parse("tcp://a:1,tcp://b:1,tcp://c:1")
    assert endpoints.others() == ("tcp://b:1", "tcp://c:1")
    assert not endpoints.follow("", now=0) and endpoints.refusals == 1
    endpoints.use("tcp://b:1")
    assert endpoints.current == "tcp://b:1" and endpoints.refusals == 0
    assert endpoints.others() == ("tcp://a:1", "tcp://c:1")
    endpoints.advance()
    assert endpoints.current == "tcp://c:1"  # on from the leader's place in the list
    assert ControlEndpoints.parse("tcp://a:1").others() == ()


def test_refusals_show_as_the_last_error_and_the_join_keeps_trying() -> None:
    with tempfile.TemporaryDirectory() as folder, FakeStandby(f"ipc://{folder}/standby.control", leader="") as standby:

        async def body() -> None:
            view = statebus.View(standby.endpoint, "Counter")
            starting = asyncio.ensure_future(view.start(DEADLINE))
            try:
                await asyncio.to_thread(standby.wait_for_hellos, 3)  # the 3rd comes after the 2nd refusal
                assert isinstance(view.last_error, statebus.NotLeaderError)
                assert view.last_error.leader_control == "" and "standby" in view.last_error.message
                assert not starting.done() and view.state is statebus.ConnectionState.CONNECTING
            finally:
                await view.close()
            with pytest.raises(statebus.ClosedError):
                await starting
        run(body)


def test_not_leader_carries_the_leader() -> None:
    from statebus.errors import error_from_wire

    error = error_from_wire(pb.Error(code=pb.ERROR_CODE_NOT_LEADER, message="a standby", leader_control="tcp://b:7000"))
    assert isinstance(error, statebus.NotLeaderError) and error.leader_control == "tcp://b:7000"
    assert error.code_name == "NOT_LEADER" and str(error) == "a standby (NOT_LEADER)"


@pytest.mark.parametrize("control, listed", [
    ("tcp://a:7000", ("tcp://a:7000",)),
    ("tcp://a:7000, tcp://b:7000", ("tcp://a:7000", "tcp://b:7000")),
    (["ipc:///x.control", "tcp://b:7000"], ("ipc:///x.control", "tcp://b:7000")),
])
def test_endpoint_lists(control: Any, listed: tuple[str, ...]) -> None:
    endpoints = ControlEndpoints.parse(control)
    assert endpoints.listed == listed and endpoints.current == listed[0]


@pytest.mark.parametrize("control", ["", "tcp://a:7000,", "tcp://a:7000,,tcp://b:7000", "a:7000", [], ["tcp://a:1,tcp://b:2"], [1], None])
def test_malformed_endpoint_lists_are_refused(control: Any) -> None:
    with pytest.raises(ValueError):
        ControlEndpoints.parse(control)
    with pytest.raises(ValueError):
        statebus.View(control, "Counter")


def test_the_rule_follows_a_named_leader_listed_or_not() -> None:
    endpoints = ControlEndpoints.parse("tcp://a:1,tcp://b:1,tcp://c:1")
    assert endpoints.follow("tcp://c:1", now=0)
    assert endpoints.current == "tcp://c:1"
    endpoints.advance()
    assert endpoints.current == "tcp://a:1"  # on from the leader's place in the list
    assert endpoints.follow("tcp://elsewhere:1", now=0) and endpoints.current == "tcp://elsewhere:1"
    assert endpoints.refusals == 2
    endpoints.welcomed()
    assert endpoints.refusals == 0


def test_the_rule_without_a_leader_pauses_and_moves_on_every_4th_refusal() -> None:
    endpoints = ControlEndpoints.parse("tcp://a:1,tcp://b:1")
    pauses, currents = [], []
    for _ in range(8):
        assert not endpoints.follow("", now=0)
        pauses.append(endpoints.pause())
        currents.append(endpoints.current)
    assert pauses == [0.025, 0.05, 0.1, 0.2, 0.2, 0.2, 0.2, 0.2]
    assert currents == ["tcp://a:1"] * 3 + ["tcp://b:1"] * 4 + ["tcp://a:1"]


def test_the_rule_does_not_follow_a_leader_that_fell_silent_a_moment_ago() -> None:
    endpoints = ControlEndpoints.parse("tcp://a:1,tcp://b:1")
    endpoints.leave_silent(now=10.0, suspect_for=4.0)
    assert endpoints.current == "tcp://b:1"
    assert not endpoints.follow("tcp://a:1", now=11.0)  # b repeats etcd's stale word
    assert endpoints.current == "tcp://b:1"
    assert endpoints.follow("tcp://a:1", now=14.5)  # the suspicion has run out
    assert endpoints.current == "tcp://a:1"
    endpoints.leave_silent(now=20.0, suspect_for=4.0)
    endpoints.welcomed()  # b leads now: nothing is suspected any more
    assert endpoints.follow("tcp://a:1", now=20.5)


def test_one_endpoint_stays_when_silent() -> None:
    endpoints = ControlEndpoints.parse("tcp://a:1")
    endpoints.leave_silent(now=0.0, suspect_for=4.0)
    assert endpoints.current == "tcp://a:1" and endpoints.follow("tcp://a:1", now=1.0)
