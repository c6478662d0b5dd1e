"""Welcomes, snapshot parts and chunks, runs and batches read as PROTOCOL.md sections 4, 9
and 17 say (the worked example of 17.12 among them)."""

import pytest

from statebus import Change, Id
from statebus._wire import pb
from statebus.codec import (
    EpochChanged,
    SnapshotAssembler,
    Unreadable,
    batches_from_run,
    batches_from_updates,
    change_to_wire,
    schemas_from_welcome,
)
from statebus.values import Operation, to_wire

E = 1254060357107898676
TABLE = pb.PropertyTable(names=["sharedText", "profile"], kinds=[pb.VALUE_KIND_STRING, pb.VALUE_KIND_ANY],
                         flags=[1, 5], type_names=["string", "any"], types=[0, 1])


def welcome_v2() -> pb.Welcome:
    return pb.Welcome(epoch=E, objects=[pb.ObjectSchema(name="Other"), pb.ObjectSchema(name="SharedData", property_table=TABLE)])


def test_version_2_property_table() -> None:
    schema = schemas_from_welcome(welcome_v2(), 2)[1]
    assert (schema.object, schema.index, schema.names) == ("SharedData", 1, ["sharedText", "profile"])
    text, profile = schema.properties
    assert text.writable and not text.optional and text.type_name == "string"
    assert profile.writable and profile.optional and not profile.persisted


def test_a_short_table_reads_as_zeros() -> None:
    table = pb.PropertyTable(names=["a", "b"], kinds=[pb.VALUE_KIND_INT], flags=[1], types=[7])
    a, b = schemas_from_welcome(pb.Welcome(objects=[pb.ObjectSchema(name="X", property_table=table)]), 2)[0].properties
    assert (a.kind, a.writable, a.type_name) == (pb.VALUE_KIND_INT, True, "")
    assert (b.kind, b.writable) == (pb.VALUE_KIND_ANY, False)


def test_version_1_properties() -> None:
    welcome = pb.Welcome(objects=[pb.ObjectSchema(name="SharedData", properties=[
        pb.PropertySchema(name="sharedText", kind=pb.VALUE_KIND_STRING, type_name="String", writable=True)])])
    (schema,) = schemas_from_welcome(welcome, 1)
    assert schema.names == ["sharedText"] and schema.properties[0].writable


def test_the_worked_example_run() -> None:
    # 17.12, step 10: two batches, the second a path change, both echoes of view V's writes.
    run = pb.UpdateRun(object=0, epoch=E, first_sequence=1, batches=2, cells=[3, 15], strings=["hi"],
                       pathed=[pb.PathedChange(path=[pb.PathComponent(key="name")], value=pb.Value(string_value="Bo"))],
                       origin_batches=[0, 1], origins=["V", "V"], write_ids=[1, 2])
    first, second = batches_from_run(run, ["sharedText", "profile"])
    assert (first.sequence, first.origin, first.write_id) == (1, "V", 1)
    assert first.changes == [Change("sharedText", "hi")]
    assert (second.sequence, second.write_id) == (2, 2)
    assert second.changes == [Change("profile", "Bo", ("name",))]


def test_cells_of_every_encoding() -> None:
    # 17.4's example: cells [3, 8, 17, 29, 40].
    part = pb.SnapshotPart(epoch=E, last=True, cells=[3, 8, 17, 29, 40, 6 << 3 | 4, 4 << 3 | 6, 7 << 3 | 2],
                           strings=["hi"], ints=[7, 1, -2], blobs=[b"\x01"], values=[to_wire({"a": [1]})], doubles=[0.5],
                           versions=[1, 2, 3, 4, 5, 6, 7, 8])
    from statebus.codec import Schema, Property

    names = ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"]
    schema = Schema("X", 0, tuple(Property(n, 0, "", True, False, True) for n in names))
    snapshot = SnapshotAssembler(schema, E).add_part(part)
    assert snapshot is not None
    assert snapshot.values == {"p0": "hi", "p1": 7, "p2": True, "p3": None, "p4": {"a": [1]}, "p5": -2, "p6": b"\x01", "p7": 0.5}
    assert snapshot.versions["p5"] == 5


def test_batch_changes_and_host_batches() -> None:
    run = pb.UpdateRun(epoch=E, first_sequence=5, batches=2, batch_changes=[2, 1], cells=[0, 8, 1], ints=[1, 2, 0])
    a, b = batches_from_run(run, ["x", "y"])
    assert [c.value for c in a.changes] == [1, 2] and a.origin == "" and a.write_id == 0
    assert b.changes == [Change("x", False)] and b.sequence == 6


@pytest.mark.parametrize(
    "run",
    [
        pb.UpdateRun(epoch=E, first_sequence=1, batches=0),
        pb.UpdateRun(epoch=E, first_sequence=1, batches=1, cells=[3]),  # the strings column is empty
        pb.UpdateRun(epoch=E, first_sequence=1, batches=1, cells=[9 << 3], ints=[1]),  # no property 9
        pb.UpdateRun(epoch=E, first_sequence=1, batches=2, batch_changes=[1], cells=[0, 0], ints=[1, 2]),
        pb.UpdateRun(epoch=E, first_sequence=1, batches=1, cells=[0], ints=[1], origin_batches=[0]),
        pb.UpdateRun(epoch=E, first_sequence=1, batches=1, cells=[7], pathed=[pb.PathedChange(operation=9)]),
    ],
)
def test_unreadable_runs(run: pb.UpdateRun) -> None:
    with pytest.raises(Unreadable):
        batches_from_run(run, ["x", "y"])


def test_parts_in_order_with_every_property() -> None:
    schema = schemas_from_welcome(welcome_v2(), 2)[1]
    assembler = SnapshotAssembler(schema, E)
    assert assembler.add_part(pb.SnapshotPart(object=1, epoch=E, sequence=4, part=0, cells=[3], strings=["a"])) is None
    snapshot = assembler.add_part(pb.SnapshotPart(object=1, epoch=E, sequence=4, part=1, last=True, cells=[14],
                                                  values=[to_wire({"name": "Ann"})]))
    assert snapshot is not None and snapshot.sequence == 4
    assert snapshot.values == {"sharedText": "a", "profile": {"name": "Ann"}}

    with pytest.raises(Unreadable):  # a part went missing
        SnapshotAssembler(schema, E).add_part(pb.SnapshotPart(epoch=E, part=1, last=True))
    with pytest.raises(Unreadable):  # a property had no cell
        SnapshotAssembler(schema, E).add_part(pb.SnapshotPart(epoch=E, last=True, cells=[3], strings=["a"]))
    with pytest.raises(Unreadable):  # no PATHED in snapshots
        SnapshotAssembler(schema, E).add_part(pb.SnapshotPart(epoch=E, last=True, cells=[7]))
    with pytest.raises(EpochChanged):
        SnapshotAssembler(schema, E).add_part(pb.SnapshotPart(epoch=E + 1, last=True))
    assembler = SnapshotAssembler(schema, E)
    assembler.add_part(pb.SnapshotPart(epoch=E, sequence=4, part=0, cells=[3], strings=["a"]))
    with pytest.raises(Unreadable):  # parts of two moments
        assembler.add_part(pb.SnapshotPart(epoch=E, sequence=5, part=1, last=True, cells=[14], values=[to_wire(1)]))


def test_version_1_chunks_and_batches() -> None:
    welcome = pb.Welcome(objects=[pb.ObjectSchema(name="S", properties=[pb.PropertySchema(name="t"), pb.PropertySchema(name="u")])])
    schema = schemas_from_welcome(welcome, 1)[0]
    assembler = SnapshotAssembler(schema, E)
    assert assembler.add_chunk(pb.SnapshotChunk(object="S", epoch=E, sequence=2, properties=[
        pb.PropertyState(name="t", value=to_wire("x"), version=2)])) is None
    snapshot = assembler.add_chunk(pb.SnapshotChunk(object="S", epoch=E, sequence=2, chunk_index=1, last=True,
                                                    properties=[pb.PropertyState(name="u", value=to_wire(3))]))
    assert snapshot is not None and snapshot.values == {"t": "x", "u": 3} and snapshot.versions == {"t": 2, "u": 0}
    batches = batches_from_updates([pb.UpdateBatch(object="S", epoch=E, sequence=3, origin="V", write_id=9, changes=[
        pb.Change(property="u", path=[pb.PathComponent(index=0)], operation=pb.ELEMENT_OPERATION_REMOVE)])], "S")
    assert batches[0].changes == [Change("u", None, (0,), Operation.REMOVE)] and batches[0].write_id == 9


def test_the_worked_example_write_bytes() -> None:
    # 17.12, step 6: the request's bytes, as the specification prints them.
    view_id = "7F3A9C2E-0B1D-4E5F-8A6B-1C2D3E4F5A6B"
    write = pb.WriteRequest(object="SharedData", write_id=1, changes=[change_to_wire(Change.set("sharedText", "hi"))],
                            view_id=view_id)
    request = pb.Request(protocol_version=2, request_id=3, write=write)
    expected = bytes.fromhex(
        "0802 1003 6248 0a0a 5368617265644461 7461 1001 1a12 0a0a 73686172656454657874 1a04 2a02 6869 2224".replace(" ", "")
    ) + view_id.encode()
    assert request.SerializeToString() == expected


def test_changes_to_wire() -> None:
    c = change_to_wire(Change.set("todos", True, Id("t2"), "done", expected_version=0))
    assert c.HasField("expected_version") and c.expected_version == 0
    assert c.path[0].id.string_value == "t2" and c.path[1].key == "done"
    assert not change_to_wire(Change.set("x", 1)).HasField("expected_version")
    removal = change_to_wire(Change.remove("todos", Id("t2")))
    assert removal.operation == pb.ELEMENT_OPERATION_REMOVE and removal.value.WhichOneof("kind") == "null_value"
