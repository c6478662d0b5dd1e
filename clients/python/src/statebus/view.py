"""The view: a replica of one host object, kept live over ZeroMQ by an asyncio task.

``View`` is the I/O shell around :class:`~statebus.replica.ReplicaState`: it owns one DEALER
(control) and one SUB (updates) socket, runs the join of PROTOCOL.md section 5 (17.3 in
version 2), follows the host's batches in order, resynchronises on a gap, joins again on a
new epoch or silence, and sends writes and calls. Everything runs on the event loop that
made the view; no method is thread-safe (see :mod:`statebus.sync` for other threads).
"""

from __future__ import annotations

import asyncio
import collections
import copy
import enum
import logging
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Iterable

import zmq

from ._endpoints import ControlArgument, ControlEndpoints
from ._engine import Engine, _Call
from ._joinbuffer import DEFAULT_MAX_JOIN_BUFFER_BYTES, JoinBuffer
from ._updates import _Request
from ._wire import pb
from ._zmq import Context, Socket
from .codec import Property, Schema, SnapshotAssembler, change_to_wire
from .errors import (
    ClosedError,
    OverloadedError,
    ReadOnlyError,
    StateBusError,
    StateBusTimeoutError,
    TooLargeError,
    TypeMismatchError,
    UnknownActionError,
    UnknownPropertyError,
)
from .keys import Keys
from .replica import ReplicaState
from .values import Change, Id, Operation, Step, check_value, path_text, to_wire

__all__ = ["View", "ConnectionState", "Changed", "Subscription", "default_timeout"]



def default_timeout() -> float:
    """``STATEBUS_TIMEOUT`` from the environment (seconds), else 10: the rule every
    ``statebus`` command follows for its waits."""
    try:
        return float(os.environ.get("STATEBUS_TIMEOUT", "10"))
    except ValueError:
        return 10.0


class ConnectionState(enum.Enum):
    """Where a view is, as the Swift replica names it."""

    CONNECTING = "connecting"  # no state yet: saying hello, waiting for the join marker
    SYNCING = "syncing"  # taking a snapshot (first join, or a resync after a gap)
    LIVE = "live"  # following the host's updates
    STALE = "stale"  # joining again (new epoch, silence, lost connection): the last state stays shown
    CLOSED = "closed"


@dataclass(frozen=True)
class Changed:
    """What a view's observers are told: shown values that changed, or a new state.

    Attributes:
        values: each property whose shown value changed, with its new value (empty when
            only ``state`` changed).
        state: the view's connection state after the change.
        sequence: the host sequence the confirmed state reflects.
    """

    values: dict[str, Any]
    state: ConnectionState
    sequence: int


class Subscription:
    """A registered callback; :meth:`cancel` removes it."""

    def __init__(self, view: "View", callback: Callable[[Changed], None]) -> None:
        self._view, self.callback = view, callback

    def cancel(self) -> None:
        """Stops calling the callback."""
        if self in self._view._callbacks:
            self._view._callbacks.remove(self)


class View(Engine):
    """A live replica of one object of a StateBus host.

    Make one with :func:`statebus.connect` (``async with statebus.connect(...) as view``).
    Properties read as attributes (``view.username``) or items (``view["username"]``): the
    host-confirmed value with this view's pending writes on top. Writes (:meth:`set`,
    :meth:`write`, ...) show at once and return a future that resolves with the host's
    sequence once the host accepted the write and this view holds it, or raises the host's
    refusal (a :class:`~statebus.StateBusError` subclass) after rolling the write back.

    Given several control endpoints (the hosts of a high-availability group), it says hello
    to one at a time and follows the leader (PROTOCOL.md, "Standby hosts");
    :attr:`control_endpoint` is the one in use.

    Its limits, keyword arguments here and of :func:`statebus.connect`:
    ``max_writes_in_flight`` (1,000) writes are sent and unanswered at a time, later ones
    wait in the view in order; past ``max_queued_writes`` (100,000) waiting writes a write
    raises :class:`~statebus.OverloadedError` at once; ``max_join_buffer_bytes`` (64 MiB,
    as the Swift replica's ``ReplicaLimits.maxJoinBufferBytes``) bounds the publications,
    counted in bytes as received, the view keeps while it joins or resyncs (until its
    snapshot is applied): past it they are dropped and the join starts again from a new
    snapshot, so nothing is missed or applied twice (counted in :attr:`restarted_joins`).

    Not thread-safe: use it from the event loop that made it (or use
    :func:`statebus.connect_sync`).
    """

    def __init__(
        self,
        control: ControlArgument,
        object: str,
        *,
        protocol_version: int = 2,
        view_id: str | None = None,
        node_name: str = "python",
        keys: Keys | None = None,
        confirms_by_echo: bool = False,
        write_timeout: float = 30.0,
        max_writes_in_flight: int = 1000,
        max_queued_writes: int = 100_000,
        max_join_buffer_bytes: int = DEFAULT_MAX_JOIN_BUFFER_BYTES,
        context: Context | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        if protocol_version not in (1, 2):
            raise ValueError(f"protocol_version is 1 or 2, got {protocol_version!r}")
        endpoints = ControlEndpoints.parse(control)
        if not isinstance(object, str) or not object or "\0" in object:
            raise ValueError(f"object must be a non-empty name without NUL, got {object!r}")
        view_id = view_id or str(uuid.uuid4()).upper()
        if "\0" in view_id or len(view_id.encode()) > 252:
            raise ValueError("a view id has no NUL and at most 252 bytes of UTF-8")
        if write_timeout <= 0 or max_writes_in_flight < 1 or max_queued_writes < 1:
            raise ValueError("write_timeout must be positive, max_writes_in_flight and max_queued_writes at least 1")
        if isinstance(max_join_buffer_bytes, bool) or not isinstance(max_join_buffer_bytes, int) or max_join_buffer_bytes < 1:
            raise ValueError(f"max_join_buffer_bytes is a number of bytes, at least 1, got {max_join_buffer_bytes!r}")
        self._endpoints = endpoints
        self.object = object
        self.protocol_version = protocol_version
        self.view_id = view_id
        self.node_name = node_name
        self.write_timeout = write_timeout
        self.max_writes_in_flight = max_writes_in_flight
        self.max_queued_writes = max_queued_writes
        self._keys = keys
        self._asks_echo = confirms_by_echo
        self._context = context or zmq.Context.instance()
        self._log = logger or logging.getLogger("statebus")

        self._state = ReplicaState(view_id)
        self._schema: Schema | None = None
        self._schema_hash = 0
        self._welcome: pb.Welcome | None = None
        self._epoch = 0  # the welcome's
        self._echo_granted = False
        self._max_message_bytes = 4 * 1024 * 1024
        self._session_token = b""

        self._control: Socket | None = None
        self._sub: Socket | None = None
        # The control socket's handshakes, watched with several endpoints listed (PROTOCOL.md,
        # "Standby hosts", rule 5), and how many completed on it.
        self._monitor: Socket | None = None
        self._handshakes = 0
        self._poller: zmq.asyncio.Poller | None = None
        self._phase = "hello"  # hello, marker, snapshot, live, closed
        self._hello = _Request()
        self._hello_schema_hash = 0
        self._snapshot = _Request()
        self._assembler: SnapshotAssembler | None = None
        self._marker_deadline = 0.0
        self._buffer = JoinBuffer(max_join_buffer_bytes)
        self._last_heard = 0.0
        self._last_sent = 0.0
        self._silence_factor = 1
        self._live_since = 0.0
        self._retry_hello_at: float | None = None

        self._next_request_id = 1
        self._next_write_id = int(time.time() * 1000) << 20
        self._next_call_id = 1
        self._write_futures: dict[int, asyncio.Future[int]] = {}
        self._write_deadlines: dict[int, float] = {}
        self._write_requests: dict[int, pb.WriteRequest] = {}
        self._calls: dict[int, _Call] = {}
        self._last_write_id = 0

        self._callbacks: list[Subscription] = []
        self._queues: list[collections.deque[Changed]] = []
        self._queue_events: list[asyncio.Event] = []
        self._shown_snapshot: dict[str, Any] = {}
        self._reported_state = ConnectionState.CONNECTING
        self._been_live = False
        self._rejoining = False
        self._ready: asyncio.Future[None] | None = None
        self._leader_search: asyncio.Task[str | None] | None = None  # after PERSISTENCE_FAILED
        self._task: asyncio.Task[None] | None = None
        self.last_error: StateBusError | None = None
        """The last error a hello or snapshot request got (the view keeps retrying)."""
        self.rejoins = 0
        """How many times the view joined again (new epoch, silence, a lost connection)."""
        self.resyncs = 0
        """How many times the view took a new snapshot after a gap."""
        self.restarted_joins = 0
        """How many times a join (or resync) started again because the updates that arrived
        during it passed ``max_join_buffer_bytes``."""

    # ===================================================================== life cycle

    async def start(self, timeout: float | None = None) -> "View":
        """Joins the host and waits until the replica is live.

        Args:
            timeout: seconds to wait (default: ``STATEBUS_TIMEOUT`` or 10).
        Raises:
            StateBusTimeoutError: not live in time (the view is closed).
            StateBusError: the host refused the hello (say :class:`UnknownObjectError`,
                :class:`ForbiddenError`); the view is closed.
        """
        if self._task is not None:
            raise RuntimeError("the view is started already")
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._task = loop.create_task(self._run(), name=f"statebus view {self.object}")
        wait = default_timeout() if timeout is None else timeout
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), wait)
        except asyncio.TimeoutError:
            error = self.last_error
            await self.close()
            raise StateBusTimeoutError(
                f"no live replica of {self.object!r} from {self._endpoints.describe()} within {wait:g} s"
                + (f"; the host said: {error.message}" if error else " (is the host running? STATEBUS_TIMEOUT sets the wait)"),
                object=self.object,
            ) from None
        except BaseException:
            await self.close()
            raise
        return self

    async def close(self) -> None:
        """Says goodbye, closes the sockets and fails what is unfinished with
        :class:`ClosedError` (pending writes roll back). Idempotent."""
        if self._phase == "closed":
            return
        task, self._task = self._task, None
        self._phase = "closed"
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - closing: nothing to report
                pass
        self._shutdown()

    def _shutdown(self) -> None:
        self._phase = "closed"
        if self._control is not None and self._welcome is not None:
            try:
                self._control.setsockopt(zmq.LINGER, 200)
                self._try_send(pb.Request(goodbye=pb.Goodbye(view_id=self.view_id)))
            except zmq.ZMQError:
                pass
        self._close_sockets()
        closed = ClosedError("the view was closed", object=self.object)
        for write_id in list(self._write_futures):
            self._apply(self._state.drop(write_id, closed))
        for call_id, call in list(self._calls.items()):
            if not call.future.done():
                call.future.set_exception(closed)
        self._calls.clear()
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(closed)
        self._report_state()
        for event in self._queue_events:
            event.set()

    async def __aenter__(self) -> "View":
        if self._task is None:
            await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ===================================================================== reading

    @property
    def schema(self) -> Schema:
        """The object's schema from the host's welcome."""
        assert self._schema is not None, "the view has not joined yet"
        return self._schema

    @property
    def state(self) -> ConnectionState:
        """connecting, syncing, live, stale or closed."""
        if self._phase == "closed":
            return ConnectionState.CLOSED
        if self._phase == "live":
            return ConnectionState.LIVE
        if self._rejoining:
            return ConnectionState.STALE
        return ConnectionState.SYNCING if self._phase == "snapshot" else ConnectionState.CONNECTING

    @property
    def stale(self) -> bool:
        """True while the view joins its host again (new epoch, silence, a lost
        connection): the values shown are the last ones it had, possibly out of date."""
        return self.state is ConnectionState.STALE

    @property
    def live(self) -> bool:
        """True while the view follows its host's updates."""
        return self._phase == "live"

    @property
    def confirms_by_echo(self) -> bool:
        """Whether the host granted confirmation by echo (asked with
        ``confirms_by_echo=True``): accepted writes are then settled by their publication
        alone (PROTOCOL.md section 8)."""
        return self._echo_granted

    @property
    def epoch(self) -> int:
        """The epoch of the host the confirmed state comes from."""
        return self._state.epoch

    @property
    def sequence(self) -> int:
        """The host sequence the confirmed state reflects."""
        return self._state.sequence

    @property
    def pending_writes(self) -> int:
        """Writes shown but not yet settled."""
        return len(self._state.pending)

    def values(self) -> dict[str, Any]:
        """Every property's shown value (a copy)."""
        return copy.deepcopy(self._shown_snapshot)

    def confirmed(self, name: str) -> Any:
        """A property's host-confirmed value, without this view's pending writes."""
        self._property(name)
        return copy.deepcopy(self._state.confirmed.get(name))

    def version(self, name: str) -> int:
        """A property's version: the sequence of the batch that last changed it (0: not
        changed this epoch). The version compare-and-set compares with."""
        self._property(name)
        return self._state.versions.get(name, 0)

    def __getitem__(self, name: str) -> Any:
        self._property(name)
        return copy.deepcopy(self._shown_snapshot.get(name))

    def __getattr__(self, name: str) -> Any:
        # Called only for names that are not attributes of the view itself.
        if name.startswith("_"):
            raise AttributeError(name)
        schema = self.__dict__.get("_schema")
        if schema is None or schema.property(name) is None:
            raise UnknownPropertyError(
                f"{self.__dict__.get('object')!r} has no property {name!r}"
                + (f"; it has {', '.join(schema.names)}" if schema else ""),
                object=self.__dict__.get("object", ""),
                property=name,
            )
        return copy.deepcopy(self.__dict__["_shown_snapshot"].get(name))

    def __setattr__(self, name: str, value: Any) -> None:
        schema = self.__dict__.get("_schema")
        if schema is not None and not name.startswith("_") and schema.property(name) is not None:
            raise AttributeError(
                f"{name} is a property of {self.object!r}: write it with `await view.set({name}=...)` "
                "(a write goes to the host, which may refuse it)"
            )
        super().__setattr__(name, value)

    def __dir__(self) -> Iterable[str]:
        return list(super().__dir__()) + (self._schema.names if self._schema else [])

    def __repr__(self) -> str:
        return f"<statebus.View {self.object} {self.state.value} seq={self.sequence} {self._shown_snapshot!r}>"

    # ===================================================================== observing

    def on_change(self, callback: Callable[[Changed], None]) -> Subscription:
        """Calls ``callback`` (on the view's event loop) after every change of the shown
        values or of the connection state. Returns a handle whose ``cancel()`` stops it."""
        subscription = Subscription(self, callback)
        self._callbacks.append(subscription)
        return subscription

    async def changes(self) -> AsyncIterator[Changed]:
        """Every change of the shown values or of the connection state, in order, until
        the view closes. A consumer that falls more than 1,000 changes behind gets the
        newer ones merged into the last (nothing is lost: each value is the latest)."""
        queue: collections.deque[Changed] = collections.deque()
        event = asyncio.Event()
        self._queues.append(queue)
        self._queue_events.append(event)
        try:
            while True:
                while queue:
                    yield queue.popleft()
                if self._phase == "closed":
                    return
                event.clear()
                await event.wait()
        finally:
            self._queues.remove(queue)
            self._queue_events.remove(event)

    async def wait_for(self, predicate: Callable[["View"], bool], timeout: float | None = None) -> None:
        """Waits until ``predicate(view)`` holds, checking after every change.

        Raises:
            StateBusTimeoutError: it did not hold within ``timeout`` seconds (default:
                ``STATEBUS_TIMEOUT`` or 10).
        """
        wait = default_timeout() if timeout is None else timeout
        if predicate(self):
            return
        ready = asyncio.Event()
        subscription = self.on_change(lambda _: ready.set() if predicate(self) else None)
        try:
            await asyncio.wait_for(ready.wait(), wait)
        except asyncio.TimeoutError:
            raise StateBusTimeoutError(f"the condition did not hold within {wait:g} s; the view shows {self!r}", object=self.object) from None
        finally:
            subscription.cancel()

    def _notify(self, values: dict[str, Any]) -> None:
        if values:
            self._shown_snapshot = {**self._shown_snapshot, **copy.deepcopy(values)}
        state = self.state
        if not values and state is self._reported_state:
            return
        self._reported_state = state
        change = Changed(copy.deepcopy(values), state, self._state.sequence)
        for subscription in list(self._callbacks):
            try:
                subscription.callback(change)
            except Exception:  # noqa: BLE001 - an observer's fault is not the view's
                self._log.exception("statebus: a change callback raised")
        for queue, event in zip(self._queues, self._queue_events):
            if len(queue) >= 1000:
                last = queue.pop()
                change = Changed({**last.values, **change.values}, change.state, change.sequence)
            queue.append(change)
            event.set()

    def _report_state(self) -> None:
        self._notify({})

    # ===================================================================== writing

    def set(self, **values: Any) -> "asyncio.Future[int]":
        """Writes whole properties: ``view.set(username="bea", email="b@x.org")``. Several
        properties make one atomic write. Shown at once.

        Returns:
            a future: the sequence the host applied the write at, once this view holds it.
        Raises (at once, nothing sent):
            UnknownPropertyError, ReadOnlyError, TypeMismatchError: a property or value the
                host would refuse for certain.
            TypeError, ValueError: a value that cannot travel (a set, an int beyond 64 bits).
            TooLargeError: the write is larger than the host's ``max_message_bytes``.
            OverloadedError: ``max_queued_writes`` (100,000) writes wait already.
        The future raises the host's refusal (the write rolled back),
        :class:`StateBusTimeoutError` after ``write_timeout``, or :class:`ClosedError`.
        Cancelling the future does not withdraw the write: it only stops waiting for it.
        """
        if not values:
            raise ValueError("set() needs at least one property=value")
        return self.write(*(Change.set(name, value) for name, value in values.items()))

    def set_at(self, property: str, *path: Step, value: Any, expected_version: int | None = None) -> "asyncio.Future[int]":
        """Writes the part of a property at ``path``: ``view.set_at("user", "email",
        value="b@x.org")``, ``view.set_at("todos", statebus.Id("t2"), "done", value=True)``.
        Another view's edit of a sibling field survives. See :meth:`set` for the rest."""
        if not path:
            raise ValueError("set_at() needs a path; use set() for the whole property")
        return self.write(Change.set(property, value, *path, expected_version=expected_version))

    def compare_and_set(self, property: str, value: Any, *, version: int) -> "asyncio.Future[int]":
        """Writes ``value`` only if the property's version is still ``version`` (from
        :meth:`version`); else the future raises :class:`VersionConflictError`."""
        return self.write(Change.set(property, value, expected_version=version))

    def insert(self, property: str, element: Any, *path: Step, position: int | None = None) -> "asyncio.Future[int]":
        """Inserts ``element`` into the list at ``path`` (none: the property itself), at
        ``position`` (default: the end). In a keyed collection its ``"id"`` must be new."""
        return self.write(Change.insert(property, element, *path, position=position))

    def remove(self, property: str, *path: Step) -> "asyncio.Future[int]":
        """Removes the element at ``path``: ``view.remove("todos", statebus.Id("t2"))``."""
        if not path:
            raise ValueError("remove() needs the element's path, such as statebus.Id('t2') or an index")
        return self.write(Change.remove(property, *path))

    def move(self, property: str, *path: Step, position: int) -> "asyncio.Future[int]":
        """Moves the element at ``path`` to index ``position`` (past the end: the end)."""
        if not path:
            raise ValueError("move() needs the element's path, such as statebus.Id('t2') or an index")
        return self.write(Change.move(property, *path, position=position))

    def write(self, *changes: Change) -> "asyncio.Future[int]":
        """Writes any changes (:class:`statebus.Change`) as one atomic write: all apply at
        one sequence or none does. The other write methods are shorthands of this one."""
        if self._phase == "closed":
            raise ClosedError("the view is closed", object=self.object)
        if not changes:
            raise ValueError("a write needs at least one change")
        if len(self._state.pending) >= self.max_queued_writes:
            raise OverloadedError(
                f"{len(self._state.pending)} writes are waiting for the host already (max_queued_writes): "
                "wait for some to settle", object=self.object)
        for change in changes:
            self._check_change(change)
        write_id = self._next_write_id
        request = pb.WriteRequest(object=self.object, write_id=write_id, view_id=self.view_id,
                                  changes=[change_to_wire(c) for c in changes])
        size = pb.Request(protocol_version=self.protocol_version, request_id=2**63, write=request).ByteSize()
        if size > self._max_message_bytes:
            raise TooLargeError(
                f"the write is {size} bytes; the host takes requests up to {self._max_message_bytes}: split it",
                object=self.object,
            )
        self._next_write_id += 1
        self._last_write_id = write_id
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._write_futures[write_id] = future
        self._write_requests[write_id] = request
        self._write_deadlines[write_id] = time.monotonic() + self.write_timeout
        self._apply(self._state.add_write(write_id, changes))
        self._flush()
        return future

    def _property(self, name: str) -> Property:
        if self._schema is None:
            raise StateBusError("the view has not joined yet", object=self.object)
        prop = self._schema.property(name)
        if prop is None:
            raise UnknownPropertyError(
                f"{self.object!r} has no property {name!r}; it has {', '.join(self._schema.names) or 'none'}",
                object=self.object, property=name,
            )
        return prop

    def _check_change(self, change: Change) -> None:
        if not isinstance(change, Change):
            raise TypeError(f"write() takes statebus.Change values, got {type(change).__name__}")
        prop = self._property(change.property)
        where = path_text(change.property, change.path)
        if not prop.writable:
            raise ReadOnlyError(f"{self.object}.{change.property} is the host's alone: views may read it, not write it",
                                object=self.object, property=change.property)
        check_value(change.value, where)
        for step in change.path:
            if isinstance(step, bool) or not isinstance(step, (str, int, Id)):
                raise TypeError(f"{where}: a path step is a str (map key), an int (list index) or statebus.Id, got {step!r}")
            if isinstance(step, int) and step < 0:
                raise ValueError(f"{where}: a list index is 0 or more, got {step}")
        if change.operation is Operation.REPLACE and not change.path:
            problem = prop.check(change.value)
            if problem:
                raise TypeMismatchError(problem, object=self.object, property=change.property)
        if change.expected_version is not None and not 0 <= change.expected_version < 2**64:
            raise ValueError(f"{where}: expected_version is a sequence number, 0 or more")
        if change.position < 0:
            raise ValueError(f"{where}: position is 0 or more, got {change.position}")

    # ===================================================================== actions

    def call(self, action: str, *arguments: Any, timeout: float | None = None) -> "asyncio.Future[Any]":
        """Calls one of the object's actions on the host (``await todo.call("clearCompleted")``).

        It is sent after every write made before it, and its future resolves with the
        action's result once this view holds every change the action made.

        Raises (at once): :class:`UnknownActionError` for an action the welcome does not
        list or the wrong number of arguments; ``TypeError`` for an argument that cannot
        travel. The future raises :class:`ActionFailedError` (the action threw),
        :class:`OverloadedError`, :class:`InterruptedCallError` (the connection was
        replaced: it may have run), :class:`StateBusTimeoutError` (default: 30 s).
        """
        if self._phase == "closed":
            raise ClosedError("the view is closed", object=self.object)
        schema = self.schema
        spec = schema.actions.get(action)
        if spec is None:
            raise UnknownActionError(
                f"{self.object!r} has no action {action!r}; it has {', '.join(schema.actions) or 'none'}", object=self.object
            )
        if len(arguments) != len(spec.parameters):
            raise UnknownActionError(
                f"{action} takes {len(spec.parameters)} argument(s) ({', '.join(p or '_' for p in spec.parameters)}), got {len(arguments)}",
                object=self.object,
            )
        for argument in arguments:
            check_value(argument, f"an argument of {action}")
        call_id = self._next_call_id
        self._next_call_id += 1
        request = pb.CallRequest(object=self.object, action=action, view_id=self.view_id, call_id=call_id,
                                 arguments=[to_wire(a) for a in arguments])
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        deadline = time.monotonic() + (self.write_timeout if timeout is None else timeout)
        self._calls[call_id] = _Call(future, request, self._last_write_id, deadline)
        self._flush()
        return future
