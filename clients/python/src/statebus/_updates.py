"""The view's updates channel and its snapshot: the join, followed by the runs of updates.

The part of the view's engine (``_engine.py``) that opens the SUB socket, waits for the join
marker and takes the snapshot (PROTOCOL.md section 5, 17.3 in version 2), keeps what arrives
meanwhile in the join buffer (``_joinbuffer.py``, bounded in bytes), applies the host's runs
or batches in order, and resynchronises on a gap, an unreadable run or a heartbeat ahead of
it (section 6). The Swift replica's ``ReplicaClient+Updates.swift``.

:class:`Updates` is a base of :class:`~statebus._engine.Engine`: it shares the engine's
state (declared here as far as it uses it) and calls back into it for what is the engine's
(a new join, settling writes and calls, sending, the view's notifications).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

import zmq
import zmq.asyncio
from google.protobuf.message import DecodeError

from ._joinbuffer import JoinBuffer
from ._wire import pb
from ._zmq import Socket
from .codec import Batch, EpochChanged, Schema, SnapshotAssembler, Unreadable, batches_from_run, batches_from_updates
from .errors import StateBusError
from .replica import BatchResult, Outcome, ReplicaState

_REQUEST_TIMEOUT = 2.0  # no welcome, join marker or snapshot in time: ask again (section 7)


@dataclass
class _Request:
    """An outstanding hello or snapshot request: its ids and when to ask again."""

    ids: set[int] = field(default_factory=set)
    deadline: float = 0.0


class Updates:
    """The join and the updates stream, as a part of :class:`~statebus._engine.Engine`.
    Runs on the view's event loop only."""

    # Set by View.__init__ (and used by the engine too).
    object: str
    protocol_version: int
    view_id: str
    last_error: StateBusError | None
    resyncs: int
    restarted_joins: int
    _log: logging.Logger
    # The replica, and what the host's welcome said.
    _state: ReplicaState
    _schema: Schema | None
    _epoch: int
    _echo_granted: bool
    # The updates socket and the join.
    _sub: Socket | None
    _poller: zmq.asyncio.Poller | None
    _phase: str  # hello, marker, snapshot, live, closed
    _snapshot: _Request
    _assembler: SnapshotAssembler | None
    _marker_deadline: float
    _buffer: JoinBuffer  # what arrives while joining, bounded in bytes
    _last_heard: float
    _live_since: float
    _been_live: bool
    _rejoining: bool
    _ready: "asyncio.Future[None] | None"

    # The engine's (and the view's), used here.

    @property
    def control_endpoint(self) -> str:  # Engine's
        raise NotImplementedError

    def _report_state(self) -> None:  # View's
        raise NotImplementedError

    def _try_send(self, request: "pb.Request") -> int:  # Engine's
        raise NotImplementedError

    def _socket(self, kind: int) -> Socket:  # Engine's
        raise NotImplementedError

    def _join_again(self, first: bool = False, reason: str = "") -> None:  # Engine's
        raise NotImplementedError

    def _apply(self, outcome: Outcome) -> None:  # Engine's
        raise NotImplementedError

    def _settle_calls(self) -> None:  # Engine's
        raise NotImplementedError

    # ===================================================================== the join

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
        self._buffer.reset()
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
        buffered = self._buffer.take()
        self._apply(outcome)
        self._settle_calls()
        for batches, size in buffered:
            # Until one starts a resync or a join (the new snapshot covers the rest).
            if self._phase != "live":
                break
            self._apply_batches(batches, size)
        if self._phase == "live" and self._ready is not None and not self._ready.done():
            self._ready.set_result(None)

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
            self._on_publication(frames[0], publication, len(frames[1]))

    def _on_publication(self, topic: bytes, p: "pb.Publication", size: int) -> None:
        """One publication, of ``size`` bytes as received."""
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
            if not self._buffer.append(batches, size):
                self._restart_join()
        elif self._phase == "live":
            self._apply_batches(batches, size)

    def _apply_batches(self, batches: list[Batch], size: int) -> None:
        """Applies one publication's batches (``size``: its bytes, kept with the rest of it
        when a gap makes the view resync)."""
        if not batches:
            return
        result, remaining, outcome = self._state.apply_batches(batches)
        self._apply(outcome)
        self._settle_calls()
        if result is BatchResult.NEW_EPOCH:
            self._join_again(reason="the host restarted (a batch of another epoch)")
        elif result is BatchResult.GAP:
            self._lost(f"a gap: sequence {remaining[0].sequence} after {self._state.sequence}", keep=remaining, size=size)
        elif result is BatchResult.UNREADABLE:
            self._lost("a batch whose path does not lead into the value")

    def _lost(self, reason: str, keep: list[Batch] | None = None, size: int = 0) -> None:
        """Resynchronise (section 6): a new snapshot on the same sockets, buffering from
        ``keep`` (batches of a publication of ``size`` bytes) on. Before the first snapshot,
        just ask again."""
        if self._phase == "marker":
            self._buffer.reset()
            return
        self.resyncs += 1
        self._log.info("statebus: %s resynchronises: %s", self.object, reason)
        self._buffer.reset(keep, size)
        if self._echo_granted:
            self._state.resend_unanswered()  # a lost echo is the write's only answer
        self._request_snapshot()

    def _restart_join(self) -> None:
        """The join buffer passed its bound (``max_join_buffer_bytes``) and is now empty:
        during the snapshot, ask for a new one, since what was dropped may be newer than
        it; while waiting for the join marker, the snapshot still to come covers what was
        dropped. Counted in :attr:`restarted_joins` (the Swift replica's
        ``restartedJoins``)."""
        self.restarted_joins += 1
        self._log.warning(
            "statebus: %s: more than %d bytes of updates arrived while joining (max_join_buffer_bytes); "
            "dropped them and restarting the join (restart %d)", self.object, self._buffer.max_bytes, self.restarted_joins)
        if self._phase == "snapshot":
            self._request_snapshot()
