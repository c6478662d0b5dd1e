"""A tiny in-process host speaking PROTOCOL.md, for testing the view's I/O shell without a
Swift host: faults a real host does not make on demand (a lost run, a reply never sent, a
new epoch on the same sockets) are one call here. The real-host tests are test_host_*.py.

It serves one object of plain properties, in version 1 and 2, on ipc endpoints in a
temporary folder, from a thread of its own; its methods are safe from the test's thread.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from typing import Any, Callable

import zmq

from statebus._wire import pb
from statebus.values import from_wire, to_wire


class FakeHost:
    def __init__(self, folder: str, object: str, values: dict[str, Any], heartbeat_ms: int = 100) -> None:
        self.object, self.values = object, dict(values)
        self.names = list(values)
        self.versions = {n: 0 for n in values}
        self.epoch = random.randrange(1, 2**63)
        self.sequence = 0
        self.heartbeat_ms = heartbeat_ms
        self.control = f"ipc://{folder}/fake.control"
        self.updates = f"ipc://{folder}/fake.updates"
        self.validate: Callable[[str, Any], str | None] = lambda name, value: None
        self.answer_writes = True
        self.drop_runs = 0
        #: Host changes made around the next snapshot request: the first before the snapshot
        #: is taken (in it, and published: a duplicate to skip), the second after (published
        #: only: the view must have buffered it). The reply then waits 50 ms, so the runs
        #: reach the view before the snapshot does.
        self.changes_around_snapshot: list[tuple[str, Any]] = []
        #: A stream during the next snapshot requests, one entry each: that many host changes
        #: of this property, published after the snapshot is taken and before it is sent
        #: (then the reply waits 50 ms), as a busy host's stream reaches a joining view.
        self.streams_during_snapshots: list[int] = []
        self.stream_property = "count"
        self.snapshot_requests = 0
        #: Set (``lose_leadership``): the host no longer leads its high-availability group and
        #: refuses hellos, snapshots and writes ``NOT_LEADER``, naming this leader.
        self.leader: str | None = None
        #: Set (``lose_etcd``): a leader that stepped down because it lost etcd, no other
        #: leader known: read-only for the views it has (writes refused ``PERSISTENCE_FAILED``),
        #: hellos and snapshot requests refused ``NOT_LEADER`` naming no leader.
        self.etcd_lost = False
        self.writes_seen: list[tuple[str, int]] = []
        self.applied: list[tuple[str, int]] = []
        self._commands: queue.Queue[Callable[[], None]] = queue.Queue()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._answers: dict[tuple[str, int], pb.WriteReply] = {}
        self._bound: dict[str, bytes] = {}  # view id -> the connection its hello came on
        self._echo: set[str] = set()  # view ids confirmed by echo
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._ready.wait(5)

    # -- commands from the test ------------------------------------------------------------

    def do(self, command: Callable[[], None]) -> None:
        done = threading.Event()
        self._commands.put(lambda: (command(), done.set()))
        assert done.wait(5)

    def change(self, name: str, value: Any) -> None:
        """A host-side change, published as a run."""
        self.do(lambda: self._apply([(name, value)], "", 0))

    def restart(self) -> None:
        """A new epoch on the same sockets: sequence 0, values kept."""
        def go() -> None:
            self.epoch, self.sequence = random.randrange(1, 2**63), 0
            self.versions = {n: 0 for n in self.names}
        self.do(go)

    def forget_views(self) -> None:
        """Unbinds every view id, as a restarted host has: writes get NOT_JOINED."""
        self.do(self._bound.clear)

    def probe(self, view_id: str, epoch: int) -> None:
        """Sends the connection bound to ``view_id`` an unsolicited pong, request id 0, with
        ``epoch``: what a host sends a view id's holder before it refuses a hello for that id
        (PROTOCOL.md section 8, "Identity")."""
        def go() -> None:
            reply = pb.Reply(protocol_version=1, request_id=0, pong=pb.Pong(epoch=epoch))
            self._router.send_multipart([self._bound[view_id], reply.SerializeToString()])
        self.do(go)

    def lose_leadership(self, leader: str) -> None:
        """From now on a standby naming ``leader`` ("" for none): hellos and snapshot
        requests get ``Reply.error`` ``NOT_LEADER``, writes a ``NOT_LEADER`` rejection; pings
        are still answered (PROTOCOL.md, "Standby hosts")."""
        def go() -> None:
            self.leader = leader
        self.do(go)

    def lose_etcd(self) -> None:
        """From now on a leader that lost etcd (PROTOCOL.md, "Standby hosts"): it keeps its
        views, pings and heartbeats, refuses writes ``PERSISTENCE_FAILED`` (not applied), and
        hellos and snapshot requests ``NOT_LEADER`` without naming a leader."""
        def go() -> None:
            self.etcd_lost = True
        self.do(go)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)

    # -- the host's loop -------------------------------------------------------------------

    def _run(self) -> None:
        ctx = zmq.Context.instance()
        self._router = ctx.socket(zmq.ROUTER)
        self._router.bind(self.control)
        self._xpub = ctx.socket(zmq.XPUB)
        self._xpub.setsockopt(zmq.XPUB_VERBOSE, 1)
        self._xpub.bind(self.updates)
        poller = zmq.Poller()
        poller.register(self._router, zmq.POLLIN)
        poller.register(self._xpub, zmq.POLLIN)
        self._ready.set()
        next_beat = time.monotonic()
        try:
            while not self._stop.is_set():
                for socket, _ in poller.poll(10):
                    if socket is self._router:
                        identity, frame = self._router.recv_multipart()
                        self._request(identity, pb.Request.FromString(frame))
                    else:
                        subscription = self._xpub.recv()
                        if subscription[:1] == b"\x01" and subscription[1:3] == b"j/":
                            view_id = subscription[3:-1].decode()
                            self._publish(subscription[1:], pb.Publication(
                                protocol_version=1, join_marker=pb.JoinMarker(view_id=view_id, epoch=self.epoch)))
                while not self._commands.empty():
                    self._commands.get()()
                if self.heartbeat_ms and time.monotonic() >= next_beat:
                    next_beat = time.monotonic() + self.heartbeat_ms / 1000
                    self._publish(b"hb\0", pb.Publication(protocol_version=1, heartbeat=pb.Heartbeat(
                        epoch=self.epoch, sequences=[pb.ObjectSequence(object=self.object, sequence=self.sequence)])))
        finally:
            self._router.close(0)
            self._xpub.close(0)

    def _publish(self, topic: bytes, publication: pb.Publication) -> None:
        self._xpub.send_multipart([topic, publication.SerializeToString()])

    def _reply(self, identity: bytes, request: pb.Request, **body: Any) -> None:
        reply = pb.Reply(protocol_version=request.protocol_version, request_id=request.request_id, **body)
        self._router.send_multipart([identity, reply.SerializeToString()])

    def _request(self, identity: bytes, request: pb.Request) -> None:
        body = request.WhichOneof("body")
        if self.leader is not None and body in ("hello", "snapshot", "write"):
            refusal = pb.Error(code=pb.ERROR_CODE_NOT_LEADER, message="this host is a standby of its group")
            if body == "write":
                self.writes_seen.append((request.write.view_id, request.write.write_id))
                self._reply(identity, request, write_reply=pb.WriteReply(write_id=request.write.write_id, rejection=refusal))
            else:
                refusal.leader_control = self.leader
                self._reply(identity, request, error=refusal)
            return
        if self.etcd_lost and body in ("hello", "snapshot"):
            self._reply(identity, request, error=pb.Error(
                code=pb.ERROR_CODE_NOT_LEADER, message="this host lost etcd and does not lead", leader_control=""))
            return
        if self.etcd_lost and body == "write":
            self.writes_seen.append((request.write.view_id, request.write.write_id))
            self._reply(identity, request, write_reply=pb.WriteReply(write_id=request.write.write_id, rejection=pb.Error(
                code=pb.ERROR_CODE_PERSISTENCE_FAILED, message="this host lost etcd: it takes no writes", object=self.object)))
            return
        if body == "hello":
            self._bound[request.hello.view_id] = identity
            if request.hello.confirms_by_echo:
                self._echo.add(request.hello.view_id)
            table = pb.PropertyTable(names=self.names, flags=[5] * len(self.names), type_names=["any"], types=[0] * len(self.names))
            if request.protocol_version == 2:
                schema = pb.ObjectSchema(name=self.object, property_table=table)
            else:
                schema = pb.ObjectSchema(name=self.object, properties=[
                    pb.PropertySchema(name=n, writable=True, optional=True, type_name="any") for n in self.names])
            self._reply(identity, request, welcome=pb.Welcome(
                epoch=self.epoch, updates_endpoint=self.updates, host_name="fake", objects=[schema],
                heartbeat_interval_ms=self.heartbeat_ms, max_message_bytes=4 << 20, session_token=b"t",
                confirms_by_echo=request.hello.confirms_by_echo,
                schema_hash=7 if request.protocol_version == 2 else 0))
        elif body == "snapshot":
            self.snapshot_requests += 1
            after = None
            if self.changes_around_snapshot:
                before, after = self.changes_around_snapshot[:2]
                self.changes_around_snapshot = []
                self._apply([before], "", 0)
            reply = self._snapshot_reply(request)
            if after is not None:
                self._apply([after], "", 0)
                time.sleep(0.05)  # the fake host's own pacing, not the test's synchronisation
            elif self.streams_during_snapshots:
                for _ in range(self.streams_during_snapshots.pop(0)):
                    self._apply([(self.stream_property, self.values[self.stream_property] + 1)], "", 0)
                time.sleep(0.05)
            self._router.send_multipart([identity, reply.SerializeToString()])
        else:
            self._write_or_ping(identity, request, body)

    def _snapshot_reply(self, request: pb.Request) -> pb.Reply:
        reply = pb.Reply(protocol_version=request.protocol_version, request_id=request.request_id)
        if request.protocol_version == 2:
            reply.snapshot_part.CopyFrom(pb.SnapshotPart(
                epoch=self.epoch, sequence=self.sequence, last=True, cells=[i << 3 | 6 for i in range(len(self.names))],
                values=[to_wire(self.values[n]) for n in self.names], versions=[self.versions[n] for n in self.names]))
        else:
            reply.snapshot_chunk.CopyFrom(pb.SnapshotChunk(
                object=self.object, epoch=self.epoch, sequence=self.sequence, last=True, properties=[
                    pb.PropertyState(name=n, value=to_wire(self.values[n]), version=self.versions[n]) for n in self.names]))
        return reply

    def _write_or_ping(self, identity: bytes, request: pb.Request, body: str | None) -> None:
        if body == "write":
            write = request.write
            key = (write.view_id, write.write_id)
            self.writes_seen.append(key)
            if self._bound.get(write.view_id) != identity:
                self._reply(identity, request, write_reply=pb.WriteReply(write_id=write.write_id, rejection=pb.Error(
                    code=pb.ERROR_CODE_NOT_JOINED, message="say hello first")))
                return
            if key in self._answers:  # a copy: the first answer again
                self._reply(identity, request, write_reply=self._answers[key])
                return
            changes = [(c.property, from_wire(c.value)) for c in write.changes]
            for name, value in changes:
                reason = self.validate(name, value)
                if reason:
                    answer = pb.WriteReply(write_id=write.write_id, rejection=pb.Error(
                        code=pb.ERROR_CODE_VALIDATION_FAILED, message=reason, object=self.object, property=name))
                    self._answers[key] = answer
                    self._reply(identity, request, write_reply=answer)
                    return
            answer = pb.WriteReply(write_id=write.write_id, accepted=True, sequence=self.sequence + 1)
            self._answers[key] = answer
            if self.answer_writes and write.view_id not in self._echo:
                self._reply(identity, request, write_reply=answer)
            self.applied.append(key)
            self._apply(changes, write.view_id, write.write_id)
        elif body == "ping":
            self._reply(identity, request, pong=pb.Pong(epoch=self.epoch))

    def _apply(self, changes: list[tuple[str, Any]], origin: str, write_id: int) -> None:
        self.sequence += 1
        for name, value in changes:
            self.values[name] = value
            self.versions[name] = self.sequence
        if self.drop_runs:
            self.drop_runs -= 1
            return
        index = {n: i for i, n in enumerate(self.names)}
        run = pb.UpdateRun(epoch=self.epoch, first_sequence=self.sequence, batches=1,
                           batch_changes=[len(changes)], cells=[index[n] << 3 | 6 for n, _ in changes],
                           values=[to_wire(v) for _, v in changes])
        if origin:
            run.origin_batches.append(0)
            run.origins.append(origin)
            run.write_ids.append(write_id)
        self._publish(b"u2/" + self.object.encode() + b"\0", pb.Publication(protocol_version=2, run=run))
        batch = pb.UpdateBatch(object=self.object, epoch=self.epoch, sequence=self.sequence, origin=origin, write_id=write_id,
                               changes=[pb.Change(property=n, value=to_wire(v)) for n, v in changes])
        self._publish(b"u/" + self.object.encode() + b"\0", pb.Publication(protocol_version=1, updates=[batch]))
