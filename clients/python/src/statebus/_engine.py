"""The view's engine: the I/O loop behind :class:`statebus.View`.

One asyncio task polls the view's two sockets (DEALER for control, SUB for updates) and its
timers, and turns what arrives into events of :class:`~statebus.replica.ReplicaState`:
the join of PROTOCOL.md section 5 (17.3 in version 2), runs or batches in order, gaps and
resyncs, re-joins on a new epoch, silence or ``NOT_JOINED``, write and call answers, and
following the leader of a high-availability group (``NOT_LEADER``; the endpoint list and its
rule are in ``_endpoints.py``), and looking for it after a write refused ``PERSISTENCE_FAILED``
(the search is in ``_leader.py``). Each protocol rule lives in one method here or in its base
:class:`~statebus._updates.Updates` (``_updates.py``: the updates socket, the join marker and
the snapshot, the join buffer, runs in order, gaps and resyncs); the public API is in
``view.py``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import zmq
import zmq.asyncio
from google.protobuf.message import DecodeError
from zmq.utils.monitor import recv_monitor_message

from ._endpoints import ControlEndpoints
from ._leader import find_leader
from ._updates import _REQUEST_TIMEOUT, Updates, _Request
from ._wire import pb
from ._zmq import Context, Socket
from .codec import schemas_from_welcome
from .errors import (
    InterruptedCallError,
    NotLeaderError,
    StateBusError,
    StateBusTimeoutError,
    UnknownObjectError,
    error_from_wire,
)
from .keys import Keys
from .replica import Outcome, WriteStatus
from .values import from_wire

_SUSPECT_FOR = 2 * _REQUEST_TIMEOUT  # a silent host named as the leader is not believed for this long
# Refused without being applied: a new connection, a hello, and the write or call again (section 8).
_SEND_AGAIN = (pb.ERROR_CODE_NOT_JOINED, pb.ERROR_CODE_VIEW_ID_IN_USE, pb.ERROR_CODE_NOT_LEADER)
_PING_AFTER = 2.0  # keep the view id bound (section 8, "Identity")
_TICK = 0.1  # the timers' resolution
_MAX_INCOMING = 64 * 1024 * 1024  # the sockets' MAXMSGSIZE, as the Swift view's


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


class Engine(Updates):
    """The loop and the protocol's rules; :class:`statebus.View` is its public face and
    initialises this state (``View.__init__``). Runs on the view's event loop only. The
    join and the updates stream are its base's, :class:`~statebus._updates.Updates`, with
    the state they use (the replica, the schema, the updates socket, the join buffer, ...)."""

    # Set by View.__init__: what the view is and how it connects.
    _endpoints: ControlEndpoints
    node_name: str
    write_timeout: float
    max_writes_in_flight: int
    rejoins: int
    _keys: Keys | None
    _asks_echo: bool
    _context: Context
    # What the host's welcome said.
    _schema_hash: int
    _welcome: pb.Welcome | None
    _max_message_bytes: int
    _session_token: bytes
    # The control socket and the hello.
    _control: Socket | None
    _monitor: Socket | None  # the control socket's handshakes, with several endpoints (rule 5)
    _handshakes: int
    _hello: _Request
    _hello_schema_hash: int
    _last_sent: float
    _silence_factor: int
    _retry_hello_at: float | None
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
                    for socket in (self._control, self._sub, self._monitor):
                        if socket is not None:
                            self._poller.register(socket, zmq.POLLIN)
                events = await self._poller.poll(int(_TICK * 1000))
                ready = {socket for socket, _ in events}
                if self._monitor is not None and self._monitor in ready:
                    self._drain_monitor()
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

    def _socket(self, kind: int) -> Socket:
        socket = self._context.socket(kind)
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.MAXMSGSIZE, _MAX_INCOMING)
        if self._keys is not None:
            self._keys.apply(socket)
        return socket

    def _close_sockets(self) -> None:
        if self._monitor is not None:
            if self._control is not None:
                self._control.disable_monitor()
            self._monitor.close()
            self._monitor = None
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
        self._buffer.reset()
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
        if self._endpoints.has_alternatives:
            # Before the connect, so that its first handshake counts (rule 5, _drain_monitor).
            self._monitor = control.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
            self._handshakes = 0
        control.connect(self.control_endpoint)
        self._control = control
        self._phase = "hello"
        self._hello = _Request()
        self._retry_hello_at = None
        self._say_hello(self._schema_hash)
        self._report_state()

    def _say_hello(self, schema_hash: int) -> None:
        self._send_hello(schema_hash)
        self._hello.deadline = time.monotonic() + _REQUEST_TIMEOUT

    def _send_hello(self, schema_hash: int) -> None:
        """Sends a hello; a welcome to any hello of this join is taken."""
        hello = pb.Hello(view_id=self.view_id, node_name=self.node_name, objects=[self.object],
                         session_token=self._session_token, confirms_by_echo=self._asks_echo)
        if self.protocol_version >= 2:
            hello.schema_hash = schema_hash
        self._hello_schema_hash = schema_hash
        self._hello.ids.add(self._try_send(pb.Request(hello=hello)))
        self._hello.ids.discard(0)

    def _drain_monitor(self) -> None:
        """The control socket's handshakes (PROTOCOL.md, "Standby hosts", rule 5). A second
        one on the same socket means the connection came back after a drop: a standby that
        took the lead bound its endpoint anew, and a hello it read and had not answered was
        lost with its old socket. The hello is sent again at once, its deadline unchanged, so
        that a host that keeps dropping the connection is still left for silence in time."""
        came_back = False
        while self._monitor is not None:
            try:
                event = recv_monitor_message(self._monitor, zmq.NOBLOCK)
            except zmq.Again:
                break
            if event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self._handshakes += 1
                came_back = came_back or self._handshakes > 1
        if came_back and self._phase == "hello" and self._retry_hello_at is None:
            self._send_hello(self._hello_schema_hash)

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
            # Request id 0 is a host asking whether this connection still holds its view id
            # (PROTOCOL.md section 8, "Identity"): not an answer to a ping, so not a liveness
            # or epoch signal.
            if rid != 0 and self._welcome is not None and reply.pong.epoch and reply.pong.epoch != self._epoch:
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


