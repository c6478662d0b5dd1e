"""The edge between the wire and the view: welcomes become a :class:`Schema`, snapshot chunks
(version 1) and parts (version 2) become a :class:`Snapshot`, update batches (version 1) and
runs (version 2) become :class:`Batch` lists, and changes become ``WriteRequest`` changes.

Pure functions, no sockets: every rule of PROTOCOL.md sections 4, 9 and 17.4-17.7 that
decides how a message reads lives here, and the tests check them without a host.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

from ._wire import pb
from .values import Change, Operation, from_wire, step_from_wire, step_to_wire, to_wire

__all__ = ["Property", "Action", "Schema", "Snapshot", "Batch", "Unreadable", "SnapshotAssembler"]

_KIND_NAMES: dict[int, type] = {
    pb.VALUE_KIND_BOOL: bool,
    pb.VALUE_KIND_INT: int,
    pb.VALUE_KIND_DOUBLE: float,
    pb.VALUE_KIND_STRING: str,
    pb.VALUE_KIND_BYTES: bytes,
}


class Unreadable(ValueError):
    """A message that cannot be read as the protocol says (17.4, "Bad input"): the view
    drops it and asks for a snapshot again."""


@dataclass(frozen=True)
class Property:
    """One property of an object's schema."""

    name: str
    kind: int  # statebus.v1.ValueKind
    type_name: str
    writable: bool
    persisted: bool
    optional: bool

    def check(self, value: Any) -> str | None:
        """Why ``value`` cannot be this property's whole value, or None when it may be
        (the host has the last word; this catches what is certain before sending)."""
        if value is None:
            return None if self.optional or self.kind == pb.VALUE_KIND_ANY else f"{self.name} is not optional: None is not a {self.type_name}"
        expected = _KIND_NAMES.get(self.kind)
        if expected is None:
            return None
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            return None  # an int is promoted to a double
        if isinstance(value, bool) != (expected is bool) or not isinstance(value, expected):
            return f"{self.name} holds a {self.type_name}; got {type(value).__name__} {value!r}"
        return None


@dataclass(frozen=True)
class Action:
    """An action of the object (a method the host runs when a view calls it)."""

    name: str
    parameters: tuple[str, ...]  # the labels, in call order ("" for an unlabelled one)
    result_type_name: str


@dataclass(frozen=True)
class Schema:
    """The object a view follows, as its host's welcome describes it."""

    object: str
    index: int  # the object's index in the welcome (version 2's runs and parts carry it)
    properties: tuple[Property, ...]
    actions: dict[str, Action] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """The property names in index order."""
        return [p.name for p in self.properties]

    def property(self, name: str) -> Property | None:
        """The property of that name, if any."""
        for p in self.properties:
            if p.name == name:
                return p
        return None


def schemas_from_welcome(welcome: "pb.Welcome", version: int) -> list[Schema]:
    """Every object of a welcome, in welcome order, read in the welcome's version."""
    found = []
    for index, o in enumerate(welcome.objects):
        actions = {
            a.name: Action(a.name, tuple(p.label for p in a.parameters), a.result_type_name) for a in o.actions
        }
        if version >= 2 and (o.HasField("property_table") or not o.properties):
            t = o.property_table
            props = []
            for i, name in enumerate(t.names):
                kind = t.kinds[i] if i < len(t.kinds) else 0
                flags = t.flags[i] if i < len(t.flags) else 0
                type_index = t.types[i] if i < len(t.types) else 0
                type_name = t.type_names[type_index] if type_index < len(t.type_names) else ""
                props.append(Property(name, kind, type_name, bool(flags & 1), bool(flags & 2), bool(flags & 4)))
        else:
            props = [Property(p.name, p.kind, p.type_name, p.writable, p.persisted, p.optional) for p in o.properties]
        found.append(Schema(o.name, index, tuple(props), actions))
    return found


@dataclass
class Snapshot:
    """An object's whole state at one sequence."""

    epoch: int
    sequence: int
    values: dict[str, Any]
    versions: dict[str, int]


@dataclass
class Batch:
    """Changes the host applied together at one sequence (applied whole or not at all)."""

    epoch: int
    sequence: int
    changes: list[Change]
    origin: str = ""
    write_id: int = 0


# ---------------------------------------------------------------------------------------
# Version 2: cells and columns (17.4)


def _cells(m: "pb.UpdateRun | pb.SnapshotPart", names: Sequence[str], allow_pathed: bool) -> list[tuple[str, Change]]:
    """The changes of an ``UpdateRun``'s or ``SnapshotPart``'s cells, in order (a
    ``SnapshotPart`` has no pathed changes)."""
    ints, doubles, strings, blobs, values = iter(m.ints), iter(m.doubles), iter(m.strings), iter(m.blobs), iter(m.values)
    pathed: Iterator[pb.PathedChange] = iter(m.pathed) if allow_pathed and isinstance(m, pb.UpdateRun) else iter(())
    out = []
    try:
        for cell in m.cells:
            index, encoding = cell >> 3, cell & 7
            if index >= len(names):
                raise Unreadable(f"property index {index} is not below the object's {len(names)} properties")
            name = names[index]
            if encoding == 0:
                change = Change(name, next(ints))
            elif encoding == 1:
                change = Change(name, next(ints) != 0)
            elif encoding == 2:
                change = Change(name, next(doubles))
            elif encoding == 3:
                change = Change(name, next(strings))
            elif encoding == 4:
                change = Change(name, next(blobs))
            elif encoding == 5:
                change = Change(name, None)
            elif encoding == 6:
                change = Change(name, from_wire(next(values)))
            else:
                if not allow_pathed:
                    raise Unreadable("a PATHED cell in a snapshot part")
                p = next(pathed)
                change = _change(name, p.path, p.value, p.operation, p.position)
            out.append((name, change))
    except StopIteration:
        raise Unreadable("a column ends before its cells do") from None
    return out


def _change(name: str, path: Iterable["pb.PathComponent"], value: "pb.Value", operation: int, position: int) -> Change:
    if operation not in (0, 1, 2, 3):
        raise Unreadable(f"unknown element operation {operation}")
    op = Operation(operation)
    return Change(name, None if op in (Operation.REMOVE, Operation.MOVE) else from_wire(value),
                  tuple(step_from_wire(s) for s in path), op, position)


def batches_from_run(run: "pb.UpdateRun", names: Sequence[str]) -> list[Batch]:
    """The batches of a version-2 run, each read whole. Raises :class:`Unreadable`."""
    if run.batches == 0:
        raise Unreadable("a run of 0 batches")
    if run.batch_changes and len(run.batch_changes) < run.batches:
        raise Unreadable("batch_changes is shorter than batches")
    if len(run.origins) < len(run.origin_batches) or len(run.write_ids) < len(run.origin_batches):
        raise Unreadable("origins or write_ids are shorter than origin_batches")
    changes = [c for _, c in _cells(run, names, allow_pathed=True)]
    origins = {b: (o, w) for b, o, w in zip(run.origin_batches, run.origins, run.write_ids)}
    batches, at = [], 0
    for b in range(run.batches):
        count = run.batch_changes[b] if run.batch_changes else 1
        if at + count > len(changes):
            raise Unreadable("the run has fewer cells than its batches")
        origin, write_id = origins.get(b, ("", 0))
        batches.append(Batch(run.epoch, run.first_sequence + b, changes[at : at + count], origin, write_id))
        at += count
    return batches


def batches_from_updates(updates: Iterable["pb.UpdateBatch"], object: str) -> list[Batch]:
    """The batches of a version-1 publication for ``object``."""
    out = []
    for u in updates:
        if u.object != object:
            continue
        changes = []
        for c in u.changes:
            changes.append(_change(c.property, c.path, c.value, c.operation, c.position))
        out.append(Batch(u.epoch, u.sequence, changes, u.origin, u.write_id))
    return out


class SnapshotAssembler:
    """Collects the chunks (version 1) or parts (version 2) of one snapshot, in order.

    ``add`` returns the :class:`Snapshot` once the last piece is in, ``None`` while more are
    to come, and raises :class:`Unreadable` when a piece is missing or unreadable (ask
    again). A piece of another epoch raises :class:`EpochChanged` (join again).
    """

    def __init__(self, schema: Schema, epoch: int) -> None:
        self.schema = schema
        self.epoch = epoch
        self.expected = 0
        self.sequence = 0
        self.values: dict[str, Any] = {}
        self.versions: dict[str, int] = {}

    def _start(self, epoch: int, index: int, sequence: int) -> None:
        if epoch != self.epoch:
            raise EpochChanged(epoch)
        if index != self.expected or (index and sequence != self.sequence):
            raise Unreadable(f"snapshot piece {index} came where {self.expected} was expected")
        self.sequence = sequence
        self.expected += 1

    def _finish(self) -> Snapshot:
        missing = [n for n in self.schema.names if n not in self.values]
        if missing:
            raise Unreadable(f"the snapshot has no value for {', '.join(missing)}")
        return Snapshot(self.epoch, self.sequence, self.values, self.versions)

    def add_part(self, part: "pb.SnapshotPart") -> Snapshot | None:
        """Takes a version-2 part."""
        self._start(part.epoch, part.part, part.sequence)
        for n, (name, change) in enumerate(_cells(part, self.schema.names, allow_pathed=False)):
            self.values[name] = change.value
            self.versions[name] = part.versions[n] if n < len(part.versions) else 0
        return self._finish() if part.last else None

    def add_chunk(self, chunk: "pb.SnapshotChunk") -> Snapshot | None:
        """Takes a version-1 chunk."""
        self._start(chunk.epoch, chunk.chunk_index, chunk.sequence)
        for p in chunk.properties:
            if self.schema.property(p.name) is None:
                continue  # a property the welcome did not list: not ours to show
            self.values[p.name] = from_wire(p.value)
            self.versions[p.name] = p.version
        return self._finish() if chunk.last else None


class EpochChanged(Exception):
    """A message of another epoch: the host restarted; join again from the hello."""

    def __init__(self, epoch: int) -> None:
        super().__init__(f"epoch {epoch}")
        self.epoch = epoch


def change_to_wire(change: Change) -> "pb.Change":
    """The wire ``Change`` of a change (``value`` null for ``REMOVE`` and ``MOVE``)."""
    c = pb.Change(property=change.property, operation=pb.ElementOperation.Name(int(change.operation)), position=change.position)
    for step in change.path:
        c.path.append(step_to_wire(step))
    to_wire(change.value if change.operation in (Operation.REPLACE, Operation.INSERT) else None, c.value)
    if change.expected_version is not None:
        c.expected_version = change.expected_version
    return c
