"""The view's engine: the I/O loop behind :class:`statebus.View`.

One asyncio task polls the view's two sockets (DEALER for control, SUB for updates) and its
timers, and turns what arrives into events of :class:`~statebus.replica.ReplicaState`:
the join of PROTOCOL.md section 5 (17.3 in version 2), runs or batches in order, gaps and
resyncs, re-joins on a new epoch, silence or ``NOT_JOINED``, write and call answers, and
following the leader of a high-availability group (``NOT_LEADER``; the endpoint list and its
rule are in ``_endpoints.py``), and looking for it after a write refused ``PERSISTENCE_FAILED``
(the search is in ``_leader.py``). Each protocol rule lives in one method here; the public API
is in ``view.py``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import zmq
import zmq.asyncio
from google.protobuf.message import DecodeError

from ._endpoints import ControlEndpoints
from ._leader import find_leader
from ._wire import pb
from .codec import Batch, EpochChanged, SnapshotAssembler, Unreadable, batches_from_run, batches_from_updates, schemas_from_welcome
from .errors import (
    InterruptedCallError,
    NotLeaderError,
    StateBusError,
    StateBusTimeoutError,
    UnknownObjectError,
    error_from_wire,
)
from .replica import BatchResult, Outcome, WriteStatus
from .values import from_wire

_REQUEST_TIMEOUT = 2.0  # no welcome, join marker or snapshot in time: ask again (section 7)
_SUSPECT_FOR = 2 * _REQUEST_TIMEOUT  # a silent host named as the leader is not believed for this long
# Refused without being applied: a new connection, a hello, and the write or call again (section 8).
_SEND_AGAIN = (pb.ERROR_CODE_NOT_JOINED, pb.ERROR_CODE_VIEW_ID_IN_USE, pb.ERROR_CODE_NOT_LEADER)
_PING_AFTER = 2.0  # keep the view id bound (section 8, "Identity")
_TICK = 0.1  # the timers' resolution
_MAX_INCOMING = 64 * 1024 * 1024  # the sockets' MAXMSGSIZE, as the Swift view's
_MAX_BUFFERED_BATCHES = 1_000_000  # the join buffer's bound: past it, a new snapshot


@dataclass
class _Call:
    future: "asyncio.Future[Any]"
    request: "pb.CallRequest"
    after_write: int  # sent only once every write made before it was sent
    deadline: float
    sent: bool = False
    waiting_sequence: int | None = None
    epoch: int = 0  # of the host that answered
    result: Any = None


@dataclass
class _Request:
    """An outstanding hello or snapshot request: its ids and when to ask again."""

    ids: set[int] = field(default_factory=set)
    deadline: float = 0.0


class Engine:
    """The loop and the protocol's rules; :class:`statebus.View` is its public face and
    initialises this state (``View.__init__``). Runs on the view's event loop only."""

    # Set by View.__init__: what the view is and how it connects.
    _endpoints: ControlEndpoints
    object: str
    protocol_version: int
    view_id: str
    node_name: str
    write_timeout: float
    max_writes_in_flight: int
    last_error: StateBusError | None
    rejoins: int
    resyncs: int
    _keys: Any
    _asks_echo: bool
    _context: zmq.Context  # type: ignore[type-arg]
    _log: Any
    # The replica, and what the host's welcome said.
    _state: Any  # ReplicaState
    _schema: Any  # Schema | None
    _schema_hash: int
    _welcome: pb.Welcome | None
    _epoch: int
    _echo_granted: bool
    _max_message_bytes: int
    _session_token: bytes
    # The sockets and the join.
    _control: zmq.Socket | None  # type: ignore[type-arg]
    _sub: zmq.Socket | None  # type: ignore[type-arg]
    _poller: zmq.asyncio.Poller | None
    _phase: str  # hello, marker, snapshot, live, closed
    _hello: "_Request"
    _hello_schema_hash: int
    _snapshot: "_Request"
    _assembler: SnapshotAssembler | None
    _marker_deadline: float
    _buffer: list[Batch]
    _last_heard: float
    _last_sent: float
    _silence_factor: int
    _live_since: float
    _retry_hello_at: float | None
    _been_live: bool
    _rejoining: bool
    _ready: "asyncio.Future[None] | None"
    _leader_search: "asyncio.Task[str | None] | None"  # one at a time (_search_for_leader)
    # Writes and calls.
    _next_request_id: int
    _write_futures: "dict[int, asyncio.Future[int]]"
    _write_deadlines: dict[int, float]
    _write_requests: "dict[int, pb.WriteRequest]"
    _calls: "dict[int, _Call]"

    @property
    def control_endpoint(self) -> str:
        """The control endpoint in use: one of :attr:`control_endpoints`, or the leader a
        standby named (PROTOCOL.md, "Standby hosts")."""
        return self._endpoints.current

    @property
    def control_endpoints(self) -> tuple[str, ...]:
        """The control endpoints the view was given, in order (one, or the hosts of a
        high-availability group)."""
        return self._endpoints.listed

    def _report_state(self) -> None:  # View's
        raise NotImplementedError

    def _notify(self, values: dict[str, Any]) -> None:  # View's
        raise NotImplementedError

    def _shutdown(self) -> None:  # View's
        raise NotImplementedError

    async def _run(self) -> None:
        try:
            self._join_again(first=True)
            while self._phase != "closed":
                if self._poller is None:
                    self._poller = zmq.asyncio.Poller()
                    for socket in (self._control, self._sub):
                        if socket is not None:
                            self._poller.register(socket, zmq.POLLIN)
                events = await self._poller.poll(int(_TICK * 1000))
                ready = {socket for socket, _ in events}
                if self._control in ready:
                    self._drain_control()
                if self._sub is not None and self._sub in ready:
                    self._drain_sub()
                self._take_leader_search()
                self._timers(time.monotonic())
                self._flush()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - a bug must not leave callers waiting forever
            self._log.exception("statebus: the view's loop failed")
            if self._ready is not None and not self._ready.done():
                self._ready.set_exception(error)
            self._shutdown()
        finally:
            search, self._leader_search = self._leader_search, None
            if search is not None:
                search.cancel()  # its sockets close as it ends

    def _try_send(self, request: "pb.Request") -> int:
        """Sends a request that is asked again when lost (hello, snapshot, ping); returns
        its request id, or 0 when the socket would not take it (its timer asks again)."""
        try:
            return self._send(request)
        except zmq.Again:
            return 0

    def _send(self, request: "pb.Request") -> int:
        """Sends a request on the control socket; returns its request id.
        Raises ``zmq.Again`` when the socket will not take it now."""
        assert self._control is not None
        request.protocol_version = self.protocol_version
        request.request_id = self._next_request_id
        self._next_request_id += 1
        self._control.send(request.SerializeToString(), zmq.NOBLOCK)
        self._last_sent = time.monotonic()
        return request.request_id

    def _socket(self, kind: int) -> zmq.Socket:  # type: ignore[type-arg]
        socket = self._context.socket(kind)
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.MAXMSGSIZE, _MAX_INCOMING)
        if self._keys is not None:
            self._keys.apply(socket)
        return socket

    def _close_sockets(self) -> None:
        for socket in (self._control, self._sub):
            if socket is not None:
                socket.close()
        self._control = self._sub = None
        self._poller = None

    def _join_again(self, first: bool = False, reason: str = "") -> None:
        """Re-join (section 6): both sockets anew, then hello. The last state stays shown."""
        self._rejoining = self._been_live
        if not first:
            self.rejoins += 1
            self._log.info("statebus: %s joins %s again: %s", self.object, self.control_endpoint, reason)
        self._close_sockets()
        self._buffer.clear()
        self._assembler = None
        self._state.resend_unanswered()
        for call in list(self._calls.values()):
            if call.sent and call.waiting_sequence is None and not call.future.done():
                call.future.set_exception(InterruptedCallError(
                    "the connection was replaced while the call was in flight: it may or may not have run",
                    object=self.object))
        self._calls = {k: c for k, c in self._calls.items() if not c.future.done()}
        control = self._socket(zmq.DEALER)
        control.setsockopt(zmq.RECONNECT_IVL, 100)
        control.setsockopt(zmq.RECONNECT_IVL_MAX, 1000)
        control.setsockopt(zmq.SNDHWM, self.max_writes_in_flight + 1000)
        control.connect(self.control_endpoint)
        self._control = control
        self._phase = "hello"
        self._hello = _Request()
        self._retry_hello_at = None
        self._say_hello(self._schema_hash)
        self._report_state()

    def _say_hello(self, schema_hash: int) -> None:
        hello = pb.Hello(view_id=self.view_id, node_name=self.node_name, objects=[self.object],
                         session_token=self._session_token, confirms_by_echo=self._asks_echo)
        if self.protocol_version >= 2:
            hello.schema_hash = schema_hash
        self._hello_schema_hash = schema_hash
        self._hello.ids.add(self._try_send(pb.Request(hello=hello)))
        self._hello.ids.discard(0)
        self._hello.deadline = time.monotonic() + _REQUEST_TIMEOUT

    def _timers(self, now: float) -> None:
        if self._phase == "hello":
            if self._retry_hello_at is not None and now >= self._retry_hello_at:
                self._join_again(reason="retrying after the host's refusal")
            elif self._retry_hello_at is None and now >= self._hello.deadline:
                if self._endpoints.has_alternatives:  # it may be the leader that died
                    self._endpoints.leave_silent(now, _SUSPECT_FOR)
                    self._join_again(reason=f"no welcome within {_REQUEST_TIMEOUT:g} s")
                else:
                    self._say_hello(self._schema_hash)  # again on the same connection (section 7)
        elif self._phase == "marker" and now >= self._marker_deadline:
            self._join_again(reason="no join marker within 2 s")
        elif self._phase == "snapshot" and now >= self._snapshot.deadline:
            self._request_snapshot()
        interval = (self._welcome.heartbeat_interval_ms / 1000) if self._welcome else 0
        if interval and self._phase in ("marker", "live") and now - self._last_heard > 3 * interval * self._silence_factor:
            self._silence_factor = min(self._silence_factor * 2, 8)
            self._endpoints.leave_silent(now, _SUSPECT_FOR)
            self._join_again(reason=f"nothing heard for {now - self._last_heard:.1f} s")
        if self._phase == "live":
            if interval and now - self._live_since > 3 * interval * self._silence_factor:
                self._silence_factor = 1
            if now - self._last_sent > _PING_AFTER:
                self._try_send(pb.Request(ping=pb.Ping()))
        for write_id, deadline in list(self._write_deadlines.items()):
            if now >= deadline:
                self._apply(self._state.drop(write_id, StateBusTimeoutError(
                    f"no answer to the write within {self.write_timeout:g} s: rolled back; its outcome is unknown",
                    object=self.object)))
        for call_id, call in list(self._calls.items()):
            if now >= call.deadline and not call.future.done():
                call.future.set_exception(StateBusTimeoutError(
                    f"no answer to the call of {call.request.action} in time; it may or may not have run", object=self.object))
                del self._calls[call_id]

    def _flush(self) -> None:
        """Sends queued writes in order (at most ``max_writes_in_flight`` unanswered),
        and calls whose earlier writes are all sent."""
        if self._phase != "live" or self._control is None:
            return
        in_flight = self._state.in_flight()
        first_unsent = None
        for w in self._state.pending:
            if w.status is not WriteStatus.QUEUED:
                continue
            if in_flight >= self.max_writes_in_flight:
                first_unsent = w.write_id
                break
            try:
                self._send(pb.Request(write=self._write_requests[w.write_id]))
            except zmq.Again:
                first_unsent = w.write_id
                break
            w.status, w.sent_epoch = WriteStatus.SENT, self._epoch
            in_flight += 1
        for call in self._calls.values():
            if call.sent or (first_unsent is not None and call.after_write >= first_unsent):
                continue
            try:
                self._send(pb.Request(call=call.request))
            except zmq.Again:
                return
            call.sent = True

    # ===================================================================== control replies

    def _drain_control(self) -> None:
        control = self._control
        for _ in range(10_000):
            if control is None or control is not self._control:
                return
            try:
                frames = control.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            if len(frames) != 1:
                continue
            reply = pb.Reply()
            try:
                reply.ParseFromString(frames[0])
            except DecodeError:
                self._log.warning("statebus: an unreadable reply from %s, dropped", self.control_endpoint)
                continue
            self._on_reply(reply)

    def _on_reply(self, reply: "pb.Reply") -> None:
        if reply.protocol_version not in (self.protocol_version, 1):
            return  # section 4: neither its own version nor 1
        body = reply.WhichOneof("body")
        rid = reply.request_id
        if body == "welcome" and self._phase == "hello" and rid in self._hello.ids:
            self._on_welcome(reply.welcome)
        elif body in ("snapshot_part", "snapshot_chunk") and self._phase == "snapshot" and rid in self._snapshot.ids:
            self._on_snapshot_piece(reply)
        elif body == "write_reply":
            self._on_write_reply(reply.write_reply)
        elif body == "call_reply":
            self._on_call_reply(reply.call_reply)
        elif body == "pong":
            if self._welcome is not None and reply.pong.epoch and reply.pong.epoch != self._epoch:
                self._join_again(reason="the host restarted (a pong of another epoch)")
        elif body == "error":
            error = error_from_wire(reply.error)
            answers_join = (rid in self._hello.ids and self._phase == "hello") or (
                rid in self._snapshot.ids and self._phase == "snapshot")
            if answers_join and isinstance(error, NotLeaderError):
                self._not_leader(error)
            elif rid in self._hello.ids and self._phase == "hello":
                self._refused(error)
            elif rid in self._snapshot.ids and self._phase == "snapshot":
                self._refused(error)
            else:
                self._log.warning("statebus: the host answered request %d: %s", rid, error)

    def _refused(self, error: StateBusError) -> None:
        """The host refused the hello or the snapshot: on the first join that ends the
        join; later the view records it and joins again every 2 s."""
        self.last_error = error
        if not self._been_live and self._ready is not None and not self._ready.done():
            self._ready.set_exception(error)
            return
        self._log.warning("statebus: %s: %s; trying again in 2 s", self.object, error)
        self._phase = "hello"
        self._retry_hello_at = time.monotonic() + _REQUEST_TIMEOUT
        self._report_state()

    def _not_leader(self, error: NotLeaderError) -> None:
        """A standby (or a leader whose lease ran out) refused the hello or the snapshot
        (PROTOCOL.md, "Standby hosts"): say hello at once to the leader it named, unless that
        one fell silent a moment ago; else ask again after a pause (50 ms doubling up to
        1 s), the next listed endpoint after every 4th refusal in a row. Shown as the last
        error from the 2nd refusal in a row on; it never ends the first join."""
        previous = self.control_endpoint
        follow = self._endpoints.follow(error.leader_control, time.monotonic())
        if self._endpoints.refusals > 1:
            self.last_error = error
        if follow:
            self._join_again(reason=f"{previous} is a standby; following the leader at {self.control_endpoint}")
            return
        pause = self._endpoints.pause()
        self._log.info("statebus: %s: %s does not lead (%s); asking %s in %.2f s", self.object, previous, error.message,
                       self.control_endpoint, pause)
        self._phase = "hello"
        self._retry_hello_at = time.monotonic() + pause
        self._report_state()

    def _on_welcome(self, welcome: "pb.Welcome") -> None:
        self._endpoints.welcomed()  # it leads
        if self.protocol_version >= 2 and not welcome.objects and self._hello_schema_hash != 0:
            if self._schema is None or welcome.schema_hash != self._schema_hash:
                self._say_hello(0)  # the schema we hold is not the host's (17.2)
                return
            # else: the schema we hold is the host's, left out of the welcome
        else:
            schemas = schemas_from_welcome(welcome, self.protocol_version)
            mine = next((s for s in schemas if s.object == self.object), None)
            if mine is None:
                self._schema, self._schema_hash = None, 0
                self._refused(UnknownObjectError(
                    f"the host {welcome.host_name or self.control_endpoint!r} does not serve {self.object!r}; it serves "
                    f"{', '.join(s.object for s in schemas) or 'nothing'}", object=self.object))
                return
            if self._schema is not None and self._schema.names != mine.names:
                self._log.info("statebus: %s's schema changed on the host", self.object)
            self._schema = mine
            self._schema_hash = welcome.schema_hash if self.protocol_version >= 2 else 0
        self._welcome = welcome
        self._epoch = welcome.epoch
        self._session_token = welcome.session_token
        self._echo_granted = welcome.confirms_by_echo
        if welcome.max_message_bytes:
            self._max_message_bytes = welcome.max_message_bytes
        self._open_updates(welcome.updates_endpoint)

    def _updates_endpoint(self, announced: str) -> str:
        """Section 2's wildcard substitution for tcp."""
        if announced.startswith("tcp://") and self.control_endpoint.startswith("tcp://"):
            host, _, port = announced[len("tcp://"):].rpartition(":")
            if host in ("*", "0.0.0.0", "[::]"):
                control_host = self.control_endpoint[len("tcp://"):].rpartition(":")[0]
                return f"tcp://{control_host}:{port}"
        return announced

    def _topic(self) -> bytes:
        return (b"u2/" if self.protocol_version >= 2 else b"u/") + self.object.encode() + b"\0"

    def _open_updates(self, announced: str) -> None:
        if self._sub is not None:
            self._sub.close()
        sub = self._socket(zmq.SUB)
        sub.setsockopt(zmq.RCVHWM, 100_000)
        sub.connect(self._updates_endpoint(announced))
        for topic in (self._topic(), b"hb\0", b"j/" + self.view_id.encode() + b"\0"):
            sub.setsockopt(zmq.SUBSCRIBE, topic)  # the join topic last (section 5, step 3)
        self._sub = sub
        self._poller = None
        self._buffer.clear()
        self._phase = "marker"
        now = time.monotonic()
        self._marker_deadline = now + _REQUEST_TIMEOUT
        self._last_heard = now
        self._report_state()

    def _request_snapshot(self) -> None:
        assert self._schema is not None
        self._phase = "snapshot"
        self._snapshot = _Request()
        self._snapshot.ids.add(self._try_send(pb.Request(snapshot=pb.SnapshotRequest(object=self.object))))
        self._snapshot.ids.discard(0)
        self._snapshot.deadline = time.monotonic() + _REQUEST_TIMEOUT
        self._assembler = SnapshotAssembler(self._schema, self._epoch)
        self._report_state()

    def _on_snapshot_piece(self, reply: "pb.Reply") -> None:
        assert self._assembler is not None and self._schema is not None
        try:
            if reply.HasField("snapshot_part"):
                if reply.snapshot_part.object != self._schema.index:
                    return
                snapshot = self._assembler.add_part(reply.snapshot_part)
            else:
                if reply.snapshot_chunk.object != self.object:
                    return
                snapshot = self._assembler.add_chunk(reply.snapshot_chunk)
        except EpochChanged:
            self._join_again(reason="the snapshot is of another epoch: the host restarted")
            return
        except Unreadable as problem:
            self._log.info("statebus: %s: %s; asking for the snapshot again", self.object, problem)
            self._request_snapshot()
            return
        if snapshot is None:
            return
        outcome = self._state.apply_snapshot(snapshot)
        self._phase = "live"  # before the buffered batches, so a gap among them resyncs
        self._been_live = True
        self._rejoining = False
        self._live_since = time.monotonic()
        self.last_error = None
        buffered, self._buffer = self._buffer, []
        self._apply(outcome)
        self._settle_calls()
        self._apply_batches(buffered)
        if self._phase == "live" and self._ready is not None and not self._ready.done():
            self._ready.set_result(None)

    def _on_write_reply(self, answer: "pb.WriteReply") -> None:
        w = self._state.pending_write(answer.write_id)
        if w is None or w.status is not WriteStatus.SENT:
            return  # its echo came first, or a copy's answer
        if answer.accepted:
            self._apply(self._state.accepted(answer.write_id, answer.sequence))
            return
        error = error_from_wire(answer.rejection)
        if answer.rejection.code in _SEND_AGAIN:
            # Not applied: say hello on a new connection (a standby's refusal names the
            # leader) and send it again (section 8, "Standby hosts").
            self._join_again(reason=f"a write was refused {error.code_name}")
            return
        if answer.rejection.code == pb.ERROR_CODE_PERSISTENCE_FAILED:
            self._search_for_leader()  # the write fails all the same: it was not applied
        self._apply(self._state.refused(answer.write_id, error))

    def _search_for_leader(self) -> None:
        """After a write refused ``PERSISTENCE_FAILED``, with other endpoints listed
        (PROTOCOL.md, "Standby hosts", rule 4): the host may be a leader that lost etcd while
        another took over. Asks the other listed endpoints, without leaving this host,
        whether one leads (:func:`~statebus._leader.find_leader`, within the request
        timeout); :meth:`_take_leader_search` joins it. One search at a time."""
        if not self._endpoints.has_alternatives or self._leader_search is not None or self._phase == "closed":
            return
        others = self._endpoints.others()
        if not others:
            return
        self._log.info("statebus: %s: %s takes no writes; asking %s whether one leads", self.object,
                       self.control_endpoint, ", ".join(others))
        self._leader_search = asyncio.get_running_loop().create_task(
            find_leader(others, self._socket, _REQUEST_TIMEOUT), name=f"statebus leader search {self.object}")

    def _take_leader_search(self) -> None:
        """Once the search for the leader ended: re-joins the endpoint that welcomed it (the
        standby refusals in a row start again), unless the view uses it already. When none
        did, the view stays on its host, live and read-only."""
        search = self._leader_search
        if search is None or not search.done():
            return
        self._leader_search = None
        try:
            leader = search.result()
        except (asyncio.CancelledError, Exception) as problem:  # noqa: BLE001 - a failed search finds nobody
            self._log.warning("statebus: %s: the search for the leader failed: %r", self.object, problem)
            leader = None
        if self._phase == "closed":
            return
        if leader is None:
            self._log.info("statebus: %s: no other listed host leads; staying on %s, read-only", self.object,
                           self.control_endpoint)
            return
        if leader == self.control_endpoint:
            return
        previous = self.control_endpoint
        self._endpoints.use(leader)
        self._join_again(reason=f"{previous} takes no writes and {leader} leads")

    def _on_call_reply(self, answer: "pb.CallReply") -> None:
        call = self._calls.get(answer.call_id)
        if call is None or call.future.done():
            return
        if answer.ok:
            call.result = from_wire(answer.result)
            call.waiting_sequence, call.epoch = answer.sequence, self._epoch
            self._settle_calls()
            return
        if answer.error.code in _SEND_AGAIN:
            call.sent = False  # it did not run: send it again once joined
            self._join_again(reason=f"a call was refused {pb.ErrorCode.Name(answer.error.code)}")
            return
        del self._calls[answer.call_id]
        call.future.set_exception(error_from_wire(answer.error))

    def _settle_calls(self) -> None:
        for call_id, call in list(self._calls.items()):
            if call.waiting_sequence is None:
                continue
            # Its changes are applied here, or that host is gone (a new epoch's snapshot
            # shows whatever of them lasted).
            if self._state.epoch != call.epoch or self._state.sequence >= call.waiting_sequence:
                del self._calls[call_id]
                if not call.future.done():
                    call.future.set_result(call.result)

    # ===================================================================== publications

    def _drain_sub(self) -> None:
        sub = self._sub
        for _ in range(10_000):
            if sub is None or sub is not self._sub:
                return
            try:
                frames = sub.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            self._last_heard = time.monotonic()
            if len(frames) != 2:
                continue
            publication = pb.Publication()
            try:
                publication.ParseFromString(frames[1])
            except DecodeError:
                if frames[0] == self._topic():
                    self._lost("an unreadable publication")
                continue
            self._on_publication(frames[0], publication)

    def _on_publication(self, topic: bytes, p: "pb.Publication") -> None:
        if p.protocol_version != (2 if topic.startswith(b"u2/") else 1):
            return  # section 4: not the version its topic carries
        if p.HasField("heartbeat"):
            if p.heartbeat.epoch != self._epoch:
                self._join_again(reason="the host restarted (a heartbeat of another epoch)")
                return
            if self._phase == "live":
                for o in p.heartbeat.sequences:
                    if o.object == self.object and o.sequence > self._state.sequence:
                        self._lost(f"the heartbeat announces sequence {o.sequence}, the view holds {self._state.sequence}")
                        return
            return
        if p.HasField("join_marker"):
            if p.join_marker.view_id == self.view_id and self._phase == "marker":
                if p.join_marker.epoch != self._epoch:
                    self._join_again(reason="the join marker is of another epoch")
                    return
                assert self._sub is not None
                self._sub.setsockopt(zmq.UNSUBSCRIBE, b"j/" + self.view_id.encode() + b"\0")
                self._request_snapshot()
            return
        if topic != self._topic() or self._schema is None:
            return
        try:
            if self.protocol_version >= 2:
                if not p.HasField("run") or p.run.object != self._schema.index:
                    return
                batches = batches_from_run(p.run, self._schema.names)
            else:
                batches = batches_from_updates(p.updates, self.object)
        except Unreadable as problem:
            self._lost(f"an unreadable run ({problem})")
            return
        if self._phase in ("marker", "snapshot"):
            self._buffer.extend(batches)
            if len(self._buffer) > _MAX_BUFFERED_BATCHES:
                self._lost("the join buffer is full")
        elif self._phase == "live":
            self._apply_batches(batches)

    def _apply_batches(self, batches: list[Batch]) -> None:
        if not batches:
            return
        result, remaining, outcome = self._state.apply_batches(batches)
        self._apply(outcome)
        self._settle_calls()
        if result is BatchResult.NEW_EPOCH:
            self._join_again(reason="the host restarted (a batch of another epoch)")
        elif result is BatchResult.GAP:
            self._lost(f"a gap: sequence {remaining[0].sequence} after {self._state.sequence}", keep=remaining)
        elif result is BatchResult.UNREADABLE:
            self._lost("a batch whose path does not lead into the value")

    def _lost(self, reason: str, keep: list[Batch] | None = None) -> None:
        """Resynchronise (section 6): a new snapshot on the same sockets, buffering from
        ``keep`` on. Before the first snapshot, just ask again."""
        if self._phase == "marker":
            self._buffer.clear()
            return
        self.resyncs += 1
        self._log.info("statebus: %s resynchronises: %s", self.object, reason)
        self._buffer = list(keep or [])
        if self._echo_granted:
            self._state.resend_unanswered()  # a lost echo is the write's only answer
        self._request_snapshot()

    # ===================================================================== settling

    def _apply(self, outcome: Outcome) -> None:
        for write_id, result in outcome.settled:
            self._write_deadlines.pop(write_id, None)
            self._write_requests.pop(write_id, None)
            future = self._write_futures.pop(write_id, None)
            if future is None or future.done():
                continue
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)
        self._notify(outcome.changed)


