"""Values travel as PROTOCOL.md section 9 says, and changes apply as the host applies them."""

import math

import pytest

from statebus import Change, Id
from statebus.values import PathError, apply_change, check_value, from_wire, to_wire


@pytest.mark.parametrize(
    "value",
    [None, True, False, 0, -(2**63), 2**63 - 1, 1.5, math.inf, "", "héllo", b"\x00\xff", [], {}, [1, "a", None],
     {"user": {"name": "Ann", "tags": ["a", "b"]}}],
)
def test_round_trip(value: object) -> None:
    wire = to_wire(value)
    back = from_wire(wire)
    assert back == value and type(back) is type(value)


def test_bool_is_not_an_int_on_the_wire() -> None:
    assert to_wire(True).WhichOneof("kind") == "bool_value"
    assert to_wire(1).WhichOneof("kind") == "int_value"


def test_a_value_with_no_field_is_null() -> None:
    from statebus._wire import pb

    assert from_wire(pb.Value()) is None


@pytest.mark.parametrize("bad,error", [({1, 2}, TypeError), (2**63, ValueError), ({1: "x"}, TypeError), (object(), TypeError)])
def test_values_that_cannot_travel_are_refused(bad: object, error: type) -> None:
    with pytest.raises(error):
        check_value(bad)


TODOS = [{"id": "t1", "title": "a", "done": False}, {"id": "t2", "title": "b", "done": False}]


def test_path_replace_keeps_siblings_and_leaves_the_original() -> None:
    user = {"name": "Ann", "email": "a@x"}
    assert apply_change(user, Change.set("user", "b@x", "email")) == {"name": "Ann", "email": "b@x"}
    assert user == {"name": "Ann", "email": "a@x"}


def test_keyed_collection_operations() -> None:
    done = apply_change(TODOS, Change.set("todos", True, Id("t2"), "done"))
    assert done[1]["done"] is True
    inserted = apply_change(TODOS, Change.insert("todos", {"id": "t0", "title": "z", "done": False}, position=0))
    assert [t["id"] for t in inserted] == ["t0", "t1", "t2"]
    assert [t["id"] for t in apply_change(TODOS, Change.remove("todos", Id("t1")))] == ["t2"]
    assert [t["id"] for t in apply_change(TODOS, Change.move("todos", Id("t1"), position=5))] == ["t2", "t1"]
    appended = apply_change(TODOS, Change.insert("todos", {"id": "t3"}))
    assert appended[-1] == {"id": "t3"}


@pytest.mark.parametrize(
    "change",
    [Change.set("todos", True, Id("nope"), "done"), Change.remove("todos", Id("nope")),
     Change.insert("todos", {"id": "t1"}), Change.set("todos", 1, 7), Change.set("todos", {"id": "other"}, Id("t1"))],
)
def test_a_path_that_leads_nowhere(change: Change) -> None:
    with pytest.raises(PathError):
        apply_change(TODOS, change)


def test_only_the_last_key_step_may_add() -> None:
    assert apply_change({"a": {}}, Change.set("p", 1, "a", "new")) == {"a": {"new": 1}}
    with pytest.raises(PathError):
        apply_change({"a": {}}, Change.set("p", 1, "missing", "new"))
