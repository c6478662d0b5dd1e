"""The Python view against real Swift hosts started by the tests (``statebus host``, the
demo's ``statebus node profile|todo --role host``, ``statebus relay``, ``statebus keygen``).

Every process is started through the ``system`` fixture (conftest.py), which waits for its
``ready`` line with a deadline and stops it by pid however the test ends.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Awaitable, Callable

import pytest

import statebus
from conftest import DEADLINE, System

pytestmark = pytest.mark.host

COUNTER = ("--object", "Counter", "--property", "count:int=0", "--property", "label:string=start",
           "--property", "fixed:string!=host", "--property", "log:any=[]", "--property", 'user:any={"name":"Ann","email":"a@x"}')


def run(test: Callable[[], Awaitable[Any]]) -> Any:
    """Runs an async test body with an overall deadline."""
    return asyncio.run(asyncio.wait_for(test(), DEADLINE * 4))


def connect(control: str, object: str = "Counter", **options: Any) -> Any:
    return statebus.connect(control, object=object, timeout=DEADLINE, **options)


@pytest.mark.parametrize("version", [1, 2])
def test_join_and_follow(system: System, version: int) -> None:
    host = system.host(*COUNTER)

    async def body() -> None:
        async with connect(host.ready["control"], protocol_version=version) as follower:
            assert follower.values() == {"count": 0, "label": "start", "fixed": "host", "log": [],
                                         "user": {"name": "Ann", "email": "a@x"}}
            assert follower.live and follower.epoch == int(host.ready["epoch"])
            async with connect(host.ready["control"], protocol_version=3 - version) as writer:
                await writer.set(count=7, label="seven")  # one write, one batch
                await writer.set_at("user", "email", value="b@x")
            await follower.wait_for(lambda v: v.user["email"] == "b@x")
            assert (follower.count, follower.label, follower.sequence) == (7, "seven", 2)
            assert follower.version("count") == 1 and follower.version("user") == 2
    run(body)


@pytest.mark.parametrize("version", [1, 2])
def test_accepted_and_refused_writes(system: System, version: int) -> None:
    host = system.start("node", "profile", "--role", "host", "--control", system.endpoint("profile"),
                        "--database", f"{system.folder}/profile.sqlite", name="profile")

    async def body() -> None:
        async with connect(host.ready["control"], "Profile", protocol_version=version) as profile:
            assert profile.user == {"username": "anna", "email": "anna@example.com"}
            sequence = await profile.set_at("user", "username", value="bea")
            assert sequence >= 1 and profile.confirmed("user")["username"] == "bea"

            changes: list[dict[str, Any]] = []
            profile.on_change(lambda change: changes.append(change.values))
            refused = profile.set_at("user", "email", value="not-an-address")
            assert profile.user["email"] == "not-an-address"  # shown at once
            with pytest.raises(statebus.ValidationFailedError) as error:
                await refused
            assert "not a valid email address" in error.value.message and error.value.object == "Profile"
            assert profile.user == {"username": "bea", "email": "anna@example.com"}  # rolled back
            assert changes[-1] == {"user": {"username": "bea", "email": "anna@example.com"}}

            with pytest.raises(statebus.ReadOnlyError):  # refused before sending
                profile.set(isLoading=True)
            version_now = profile.version("isNotificationEnabled")
            await profile.compare_and_set("isNotificationEnabled", True, version=version_now)
            with pytest.raises(statebus.VersionConflictError):
                await profile.compare_and_set("isNotificationEnabled", False, version=version_now)
            assert profile.isNotificationEnabled is True

            assert await profile.call("rename", "cy") == "bea"
            assert profile.user["username"] == "cy"  # the call returns once the view holds its changes
            with pytest.raises(statebus.ActionFailedError) as failed:
                await profile.call("rename", " ")
            assert "cannot be blank" in failed.value.message
    run(body)


def test_keyed_collection_operations_and_actions(system: System) -> None:
    host = system.start("node", "todo", "--role", "host", "--control", system.endpoint("todo"),
                        "--database", f"{system.folder}/todo.sqlite", name="todo")

    async def body() -> None:
        async with connect(host.ready["control"], "TodoList") as todo, connect(host.ready["control"], "TodoList") as other:
            ids = lambda view: [t["id"] for t in view.todos]  # noqa: E731
            assert ids(todo) == ["t1", "t2", "t3"]
            await todo.set_at("todos", statebus.Id("t2"), "done", value=True)
            await todo.insert("todos", {"id": "py-1", "title": "from python", "done": False}, position=0)
            await todo.move("todos", statebus.Id("t3"), position=0)
            await other.remove("todos", statebus.Id("t1"))
            stale_edit = todo.set_at("todos", statebus.Id("t1"), "title", value="gone?")
            with pytest.raises(statebus.InvalidPathError) as error:
                await stale_edit
            assert "t1" in error.value.message
            await todo.wait_for(lambda v: "t1" not in ids(v))
            assert ids(todo) == ["t3", "py-1", "t2"] and todo.todos[2]["done"] is True
            with pytest.raises(statebus.ValidationFailedError):
                await todo.set_at("todos", statebus.Id("t3"), "title", value="  ")
            assert await todo.call("clearCompleted") == 1
            assert ids(todo) == ["t3", "py-1"]
            await other.wait_for(lambda v: ids(v) == ["t3", "py-1"])
    run(body)


@pytest.mark.parametrize("version", [1, 2])
def test_late_join_under_a_stream_of_writes(system: System, version: int) -> None:
    """A view joining while another view streams inserts (windows of 20 pipelined writes)
    holds exactly the host's list: nothing missed (no gap), nothing applied twice."""
    host = system.host(*COUNTER)

    async def body() -> None:
        async with connect(host.ready["control"]) as writer:
            written = 0

            async def window() -> None:
                nonlocal written
                futures = []
                for _ in range(20):
                    written += 1
                    futures.append(writer.insert("log", written))
                await asyncio.gather(*futures)

            for _ in range(5):
                await window()
            late = asyncio.ensure_future(connect(host.ready["control"], protocol_version=version).__aenter__())
            at_join: list[int] = []
            late.add_done_callback(lambda done: at_join.append(done.result().sequence) if not done.exception() else None)
            while not late.done():  # the stream goes on while it joins (run() bounds the wait)
                await window()
            for _ in range(5):
                await window()
            joined = late.result()
            try:
                assert 0 < at_join[0] < written, f"joined at sequence {at_join[0]} of {written}: not during the stream"
                await joined.wait_for(lambda v: len(v.log) >= written)
                assert joined.log == list(range(1, written + 1))
                assert joined.sequence == written and writer.log == joined.log
                assert joined.resyncs == 0 and joined.rejoins == 0  # the join itself missed nothing
            finally:
                await joined.close()
    run(body)


def test_confirmation_by_echo(system: System) -> None:
    """A view that asks for confirmation by echo gets it from a host (and not from a relay),
    and its pipelined writes are settled by their publications alone."""
    host = system.host(*COUNTER)
    relay = system.relay(host.ready["control"])

    async def body() -> None:
        async with connect(host.ready["control"], confirms_by_echo=True) as view, \
                connect(relay.ready["control"], confirms_by_echo=True) as behind:
            assert view.confirms_by_echo and not behind.confirms_by_echo
            sequences = await asyncio.gather(*(view.insert("log", n) for n in range(1, 201)))
            assert sorted(sequences) == list(range(1, 201)) and view.log == list(range(1, 201))
            assert await behind.set(count=1) == 201
    run(body)


def test_kill_9_and_restart_with_writes_in_flight(system: System) -> None:
    """Writes to a persisted property in flight when the host is killed (some answered,
    some committed without an answer, some never read): each is settled (none lost) and
    the restarted host's list holds each once, in order (none applied twice)."""
    declarations = ("--object", "Counter", "--property", "log:any~=[]")
    control = system.endpoint("durable")
    host = system.host(*declarations, name="durable", control=control)

    async def body() -> None:
        nonlocal host
        async with connect(control, write_timeout=DEADLINE * 2) as writer:
            first_epoch = writer.epoch
            futures: list[asyncio.Future[int]] = []
            in_flight = 0
            # First 100 writes, waiting for the first answer: when the host answers them in
            # one turn, all are settled by then, so 100 more go out just before the kill.
            window = [writer.insert("log", n + 1) for n in range(100)]
            futures += window
            await window[0]
            if all(future.done() for future in futures):
                futures += [writer.insert("log", len(futures) + n + 1) for n in range(100)]
            in_flight = sum(not future.done() for future in futures)
            host.kill()  # SIGKILL
            futures += [writer.insert("log", len(futures) + n + 1) for n in range(100)]  # while it is down
            total = len(futures)
            host = await asyncio.to_thread(system.host, *declarations, name="durable", control=control)
            results = await asyncio.gather(*futures, return_exceptions=True)
            failures = [r for r in results if isinstance(r, BaseException)]
            assert failures == [], failures[:3]
            assert in_flight > 0, "no write was in flight at the kill"
            assert writer.epoch != first_epoch and writer.pending_writes == 0 and writer.rejoins >= 1
            assert writer.log == list(range(1, total + 1))
        async with connect(control) as fresh:
            assert fresh.log == list(range(1, total + 1))
            print(f"kill -9: {in_flight} of {total} writes in flight at the kill, all settled, each applied once")
    run(body)


def test_a_restarted_host_is_rejoined_and_shown_stale_meanwhile(system: System) -> None:
    control = system.endpoint("restart")
    host = system.host(*COUNTER, name="restart", control=control)

    async def body() -> None:
        async with connect(control) as view:
            await view.set(count=5)
            states: list[statebus.ConnectionState] = []
            view.on_change(lambda change: states.append(change.state))
            host.kill()
            await view.wait_for(lambda v: v.stale, timeout=DEADLINE)
            assert view.count == 5  # the last state stays shown
            await asyncio.to_thread(system.host, *COUNTER, name="restart", control=control)
            await view.wait_for(lambda v: v.live and v.count == 0, timeout=DEADLINE)
            assert statebus.ConnectionState.STALE in states
    run(body)


def test_a_paused_host_makes_the_view_stale_and_writes_land_once(system: System) -> None:
    """SIGSTOP the host: after 3 heartbeat intervals the view is stale and joins again on a
    new connection. Writes sent meanwhile reach the host twice once it runs again (on the
    old connection's queue, then sent again after the hello): the copies are answered from
    the ledger, so each lands once, in order, in the same epoch."""
    host = system.host(*COUNTER)

    async def body() -> None:
        async with connect(host.ready["control"]) as view:
            epoch = view.epoch
            host.pause()
            try:
                futures = [view.insert("log", n) for n in range(1, 51)]
                await view.wait_for(lambda v: v.stale, timeout=DEADLINE)
                assert view.log == list(range(1, 51))  # still shown, pending
            finally:
                host.resume()
            await asyncio.gather(*futures)
            await view.wait_for(lambda v: v.live)
            assert view.epoch == epoch and view.rejoins >= 1
            assert view.log == list(range(1, 51)) and view.confirmed("log") == list(range(1, 51))
        async with connect(host.ready["control"]) as fresh:
            assert fresh.log == list(range(1, 51)) and fresh.sequence == 50
    run(body)


def test_keys(system: System) -> None:
    """A host with CURVE keys: a key-less view and an unlisted key never get in; a read key
    reads but its write is refused FORBIDDEN and rolled back; a write key writes."""
    keys = f"{system.folder}/keys"
    public = {}
    for name in ("host", "reader", "writer", "stranger"):
        public[name] = system.run("keygen", name, "--out", keys)[-1].strip()
    with open(f"{keys}/authorized.keys", "w") as file:
        file.write(f"read {public['reader']} reader\nwrite {public['writer']} writer\n")
    host = system.host(*COUNTER, name="keyed", extra=("--key", f"{keys}/host.key", "--authorized", f"{keys}/authorized.keys"))
    control = host.ready["control"]

    async def body() -> None:
        with pytest.raises(statebus.StateBusTimeoutError):
            await statebus.connect(control, object="Counter", timeout=2)
        with pytest.raises(statebus.StateBusTimeoutError):
            await statebus.connect(control, object="Counter", timeout=2, key=f"{keys}/stranger.key", host_key=f"{keys}/host.pub")
        async with connect(control, key=f"{keys}/reader.key", host_key=f"{keys}/host.pub") as reader, \
                connect(control, key=f"{keys}/writer.key", host_key=public["host"]) as writer:
            assert reader.count == 0
            refused = reader.set(count=1)
            with pytest.raises(statebus.ForbiddenError):
                await refused
            assert reader.count == 0
            await writer.set(count=2)
            await reader.wait_for(lambda v: v.count == 2)
    run(body)


def test_a_key_file_others_may_read_is_refused(system: System) -> None:
    keys = f"{system.folder}/keys"
    system.run("keygen", "loose", "--out", keys)
    os.chmod(f"{keys}/loose.key", 0o644)
    with pytest.raises(statebus.KeyFileError, match="chmod 600"):
        statebus.connect("ipc:///nowhere", object="X", key=f"{keys}/loose.key", host_key=f"{keys}/loose.pub")


@pytest.mark.parametrize("version", [1, 2])
def test_through_a_relay(system: System, version: int) -> None:
    host = system.host(*COUNTER)
    relay = system.relay(host.ready["control"])

    async def body() -> None:
        async with connect(relay.ready["control"], protocol_version=version) as behind, \
                connect(host.ready["control"]) as direct:
            assert behind.values() == direct.values()
            await behind.set(label="via relay")
            await direct.wait_for(lambda v: v.label == "via relay")
            await direct.insert("log", 1)
            await behind.wait_for(lambda v: v.log == [1])
            with pytest.raises(statebus.VersionConflictError):
                await behind.compare_and_set("count", 9, version=99)
            assert behind.count == 0
    run(body)


def test_over_tcp_loopback(system: System) -> None:
    host = system.host(*COUNTER, name="tcp", control="tcp://127.0.0.1:*", extra=("--insecure",))
    assert host.ready["control"].startswith("tcp://127.0.0.1:")

    async def body() -> None:
        async with connect(host.ready["control"]) as view:
            await view.set(count=4)
            assert view.confirmed("count") == 4
    run(body)


def test_the_sync_facade(system: System) -> None:
    host = system.host(*COUNTER)
    with statebus.connect_sync(host.ready["control"], object="Counter", timeout=DEADLINE) as counter:
        assert counter.count == 0
        assert counter.set(count=3) == 1
        assert counter.count == 3
        with pytest.raises(statebus.ReadOnlyError):
            counter.set(fixed="mine")
        lines = system.run("get", "--control", host.ready["control"], "--object", "Counter", "count")
        assert lines[-1] == "3"
