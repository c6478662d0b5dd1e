"""Values and paths: the protocol's language-neutral values as Python values (PROTOCOL.md
section 9), and the changes a write or a batch makes inside them.

A value is ``None``, ``bool``, ``int`` (64-bit signed), ``float``, ``str``, ``bytes``, a
``list`` of values or a ``dict`` of ``str`` to values. A path leads into a value: a ``str``
step is a map key, an ``int`` step a list index, and :class:`Id` the element of a keyed
collection (a list of maps with unique ``"id"`` fields) whose id equals it.
"""

from __future__ import annotations

import copy
import enum
from dataclasses import dataclass, field
from typing import Any, Sequence, Union

from ._wire import pb

__all__ = ["Id", "Step", "Operation", "Change", "PathError", "to_wire", "from_wire", "apply_change", "check_value"]

INT_MIN, INT_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class Id:
    """A path step that selects the element of a keyed collection whose ``"id"`` equals
    ``value``, wherever it is in the list (``todos[id="t2"]`` in the tools' text form)."""

    value: Any

    def __post_init__(self) -> None:
        check_value(self.value, "an Id")


Step = Union[str, int, Id]


class Operation(enum.IntEnum):
    """What a change does at its path (``statebus.v1.ElementOperation``)."""

    REPLACE = pb.ELEMENT_OPERATION_REPLACE
    INSERT = pb.ELEMENT_OPERATION_INSERT
    REMOVE = pb.ELEMENT_OPERATION_REMOVE
    MOVE = pb.ELEMENT_OPERATION_MOVE


@dataclass(frozen=True)
class Change:
    """One change of one property, as a write sends it and a batch carries it.

    Attributes:
        property: the property's name.
        value: the new value (of the whole property, or of the part at ``path``); ``None``
            for ``REMOVE`` and ``MOVE``.
        path: where in the property's value, outermost first; empty: the whole property.
        operation: replace (default), or insert, remove or move an element of a list.
        position: where an inserted or moved element goes (past the end: the end).
        expected_version: compare-and-set: apply only if the property's version equals it.
    """

    property: str
    value: Any = None
    path: tuple[Step, ...] = ()
    operation: Operation = Operation.REPLACE
    position: int = 0
    expected_version: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # The common case (a whole value, as decoded from a run) needs no conversion.
        if type(self.path) is not tuple:
            if not isinstance(self.path, (tuple, list)):
                raise TypeError(
                    f"Change.path is a tuple of steps, got {self.path!r}; Change.set(property, value, *path) takes them one by one")
            object.__setattr__(self, "path", tuple(self.path))
        if type(self.operation) is not Operation:
            object.__setattr__(self, "operation", Operation(self.operation))

    @classmethod
    def set(cls, property: str, value: Any, *path: Step, expected_version: int | None = None) -> "Change":
        """Replace the property's value, or the part of it at ``path``."""
        return cls(property, value, tuple(path), Operation.REPLACE, 0, expected_version)

    @classmethod
    def insert(cls, property: str, element: Any, *path: Step, position: int | None = None) -> "Change":
        """Insert ``element`` into the list at ``path`` (empty: the property), at
        ``position`` (default: the end)."""
        return cls(property, element, tuple(path), Operation.INSERT, 2**32 - 1 if position is None else position)

    @classmethod
    def remove(cls, property: str, *path: Step) -> "Change":
        """Remove the element at ``path`` (its last step an :class:`Id` or an index)."""
        return cls(property, None, tuple(path), Operation.REMOVE)

    @classmethod
    def move(cls, property: str, *path: Step, position: int) -> "Change":
        """Move the element at ``path`` to index ``position`` (past the end: the end)."""
        return cls(property, None, tuple(path), Operation.MOVE, position)


class PathError(LookupError):
    """A path does not lead into a value (the host would answer ``INVALID_PATH``)."""


# ---------------------------------------------------------------------------------------
# Python values <-> wire values


def check_value(value: Any, what: str = "a value", depth: int = 0) -> None:
    """Raises ``TypeError`` (or ``ValueError`` for an int out of range, or a value nested
    deeper than a host stores) if ``value`` cannot travel as a StateBus value."""
    if depth > 18:
        raise ValueError(f"{what} is nested more than 18 levels deep; a host stores at most about 18 (PROTOCOL.md, section 11)")
    if value is None or isinstance(value, (bool, float, str, bytes)):
        return
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise ValueError(f"{what}: the int {value} does not fit in 64 bits")
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            check_value(item, what, depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{what}: map keys must be str, got {type(key).__name__} {key!r}")
            check_value(item, what, depth + 1)
        return
    raise TypeError(
        f"{what}: a {type(value).__name__} cannot travel as a StateBus value; "
        "use None, bool, int, float, str, bytes, list or dict"
    )


def to_wire(value: Any, out: "pb.Value | None" = None) -> "pb.Value":
    """The wire ``Value`` of a Python value (checked with :func:`check_value` first)."""
    v = pb.Value() if out is None else out
    if value is None:
        v.null_value = pb.NULL_VALUE
    elif isinstance(value, bool):
        v.bool_value = value
    elif isinstance(value, int):
        v.int_value = value
    elif isinstance(value, float):
        v.double_value = value
    elif isinstance(value, str):
        v.string_value = value
    elif isinstance(value, bytes):
        v.bytes_value = value
    elif isinstance(value, (list, tuple)):
        items = v.list_value.items
        v.list_value.SetInParent()
        for item in value:
            to_wire(item, items.add())
    elif isinstance(value, dict):
        entries = v.map_value.entries
        v.map_value.SetInParent()
        for key, item in value.items():
            to_wire(item, entries[key])
    else:
        raise TypeError(f"a {type(value).__name__} cannot travel as a StateBus value")
    return v


def from_wire(v: "pb.Value") -> Any:
    """The Python value of a wire ``Value``; a ``Value`` with no field set is ``None``."""
    kind = v.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind == "list_value":
        return [from_wire(item) for item in v.list_value.items]
    if kind == "map_value":
        return {key: from_wire(item) for key, item in v.map_value.entries.items()}
    return getattr(v, kind)


def step_to_wire(step: Step) -> "pb.PathComponent":
    """The wire path component of a step."""
    if isinstance(step, Id):
        return pb.PathComponent(id=to_wire(step.value))
    if isinstance(step, bool) or not isinstance(step, (str, int)):
        raise TypeError(f"a path step is a str (map key), an int (list index) or statebus.Id, got {step!r}")
    if isinstance(step, int):
        if not 0 <= step < 2**32:
            raise ValueError(f"a list index is 0 or more, got {step}")
        return pb.PathComponent(index=step)
    return pb.PathComponent(key=step)


def step_from_wire(c: "pb.PathComponent") -> Step:
    """The step of a wire path component (neither field set reads as the key "")."""
    which = c.WhichOneof("step")
    if which == "index":
        return c.index
    if which == "id":
        return Id(from_wire(c.id))
    return c.key


def path_text(property: str, path: Sequence[Step]) -> str:
    """A path in the tools' text form: ``user.email``, ``todos[id="t2"].done``."""
    text = property
    for step in path:
        if isinstance(step, Id):
            text += f"[id={step.value!r}]"
        elif isinstance(step, int):
            text += f"[{step}]"
        else:
            text += f".{step}"
    return text


# ---------------------------------------------------------------------------------------
# Applying changes


def _locate(container: Any, step: Step) -> Any:
    """The key or index ``step`` selects in ``container``; raises :class:`PathError`."""
    if isinstance(step, Id):
        if not isinstance(container, list):
            raise PathError(f"an id step needs a list, found {type(container).__name__}")
        for index, element in enumerate(container):
            if isinstance(element, dict) and element.get("id") == step.value and type(element.get("id")) is type(step.value):
                return index
        raise PathError(f"no element with id {step.value!r}")
    if isinstance(step, int):
        if not isinstance(container, list) or not 0 <= step < len(container):
            raise PathError(f"no index {step}")
        return step
    if not isinstance(container, dict):
        raise PathError(f"a key step needs a map, found {type(container).__name__}")
    return step


#: Values that cannot change in place: a copy of one is the value itself.
_IMMUTABLE = (int, float, str, bytes, bool, type(None))


def copied(value: Any) -> Any:
    """A copy of ``value`` that shares no mutable part with it (a scalar is its own copy:
    most properties are, and ``copy.deepcopy`` costs a microsecond even for an int)."""
    return value if type(value) in _IMMUTABLE else copy.deepcopy(value)


def apply_change(current: Any, change: Change, *, in_place: bool = False) -> Any:
    """The property's value after ``change``, leaving ``current`` untouched unless
    ``in_place`` (then ``current`` is changed where it can be, and must be the caller's own
    copy). Either way the result never shares parts with ``change.value``.

    Raises :class:`PathError` when the path does not lead into the value (a view skips such
    a pending change, PROTOCOL.md section 8). Every check comes before any mutation, so a
    refused change leaves ``current`` as it was, in place or not.
    """
    if not change.path and change.operation is Operation.REPLACE:
        return copied(change.value)
    root = current if in_place else copy.deepcopy(current)
    if change.operation == Operation.INSERT:
        target = root
        for step in change.path:
            target = target[_existing(target, step)]
        if not isinstance(target, list):
            raise PathError("an insert needs a list")
        element = copy.deepcopy(change.value)
        if isinstance(element, dict) and "id" in element and any(
            isinstance(e, dict) and e.get("id") == element["id"] for e in target
        ):
            raise PathError(f"an element with id {element['id']!r} is there already")
        target.insert(min(change.position, len(target)), element)
        return root
    if not change.path:
        raise PathError("remove and move need the element's path")
    parent = root
    for step in change.path[:-1]:
        parent = parent[_existing(parent, step)]
    last = change.path[-1]
    if change.operation == Operation.REPLACE:
        if isinstance(last, str) and isinstance(parent, dict):
            parent[last] = copy.deepcopy(change.value)  # the last key step adds or replaces
        else:
            index = _locate(parent, last)
            if isinstance(last, Id) and (not isinstance(change.value, dict) or change.value.get("id") != last.value):
                raise PathError("an element reached by id keeps its id")
            parent[index] = copy.deepcopy(change.value)
        return root
    if isinstance(last, str):
        raise PathError("remove and move address an element by id or index")
    index = _locate(parent, last)
    element = parent.pop(index)
    if change.operation == Operation.MOVE:
        parent.insert(min(change.position, len(parent)), element)
    return root


def _existing(container: Any, step: Step) -> Any:
    """Like :func:`_locate`, but a key must exist too (only the last key step may add)."""
    at = _locate(container, step)
    if isinstance(step, str) and step not in container:
        raise PathError(f"no key {step!r}")
    return at
