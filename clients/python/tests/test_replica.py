"""The replica's rules without sockets: PROTOCOL.md section 6 (order, gaps, epochs) and
section 8 (pending writes, echo, answer before echo, rollback, writes across an epoch)."""

import random

from statebus import Change, Id, ValidationFailedError
from statebus.codec import Batch, Snapshot
from statebus.replica import BatchResult, ReplicaState, WriteStatus

E, F = 11, 22


def joined(values: dict | None = None, sequence: int = 0, epoch: int = E) -> ReplicaState:
    state = ReplicaState("V")
    state.apply_snapshot(Snapshot(epoch, sequence, values or {"name": "ann", "user": {"name": "Ann", "email": "a@x"}}, {}))
    return state


def test_batches_in_order_duplicates_skipped_gap_found() -> None:
    state = joined(sequence=3)
    result, remaining, outcome = state.apply_batches([
        Batch(E, 2, [Change("name", "old")]),  # in the snapshot already
        Batch(E, 4, [Change("name", "bo")]),
        Batch(E, 6, [Change("name", "cy")]),  # 5 is missing
        Batch(E, 7, [Change("name", "di")]),
    ])
    assert result is BatchResult.GAP and [b.sequence for b in remaining] == [6, 7]
    assert state.sequence == 4 and state.shown["name"] == "bo" and outcome.changed == {"name": "bo"}
    assert state.versions["name"] == 4


def test_a_batch_of_another_epoch_means_join_again() -> None:
    state = joined()
    result, _, _ = state.apply_batches([Batch(F, 1, [Change("name", "x")])])
    assert result is BatchResult.NEW_EPOCH and state.shown["name"] == "ann"


def test_a_batch_applies_whole_or_not_at_all() -> None:
    state = joined()
    result, _, _ = state.apply_batches([Batch(E, 1, [Change("name", "x"), Change.set("user", 1, "missing", "deeper")])])
    assert result is BatchResult.UNREADABLE and state.shown["name"] == "ann" and state.sequence == 0


def test_echo_settles_a_write_and_no_flicker_back() -> None:
    state = joined()
    state.add_write(100, [Change("name", "bea")])
    assert state.shown["name"] == "bea"
    state.pending[0].status = WriteStatus.SENT
    # Someone else's older value arrives first: the pending write stays on top.
    _, _, outcome = state.apply_batches([Batch(E, 1, [Change("name", "cy")])])
    assert state.shown["name"] == "bea" and outcome.changed == {}
    _, _, outcome = state.apply_batches([Batch(E, 2, [Change("name", "bea")], origin="V", write_id=100)])
    assert outcome.settled == [(100, 2)] and not state.pending and state.shown["name"] == "bea"


def test_an_answer_before_the_echo_waits_for_its_sequence() -> None:
    state = joined()
    state.add_write(100, [Change("name", "bea")])
    state.pending[0].status, state.pending[0].sent_epoch = WriteStatus.SENT, E
    assert state.accepted(100, 2).settled == []
    state.apply_batches([Batch(E, 1, [Change("name", "cy")])])
    assert state.shown["name"] == "bea"  # sequence 2 not applied yet
    _, _, outcome = state.apply_batches([Batch(E, 2, [Change("name", "bea")], origin="V", write_id=100)])
    assert outcome.settled == [(100, 2)]


def test_an_answer_after_the_sequence_settles_at_once() -> None:
    state = joined(sequence=5)
    state.add_write(100, [Change("name", "bea")])
    state.pending[0].status, state.pending[0].sent_epoch = WriteStatus.SENT, E
    assert state.accepted(100, 4).settled == [(100, 4)]


def test_a_refusal_rolls_back_and_keeps_later_writes() -> None:
    state = joined()
    state.add_write(1, [Change.set("user", "bad", "email")])
    state.add_write(2, [Change.set("user", "Bea", "name")])
    assert state.shown["user"] == {"name": "Bea", "email": "bad"}
    error = ValidationFailedError("an email address needs an @")
    outcome = state.refused(1, error)
    assert outcome.settled == [(1, error)]
    assert state.shown["user"] == {"name": "Bea", "email": "a@x"} and outcome.changed == {"user": state.shown["user"]}


def test_a_sibling_field_by_someone_else_shows_under_a_pending_path_write() -> None:
    state = joined()
    state.add_write(1, [Change.set("user", "b@x", "email")])
    state.apply_batches([Batch(E, 1, [Change.set("user", "Cy", "name")])])
    assert state.shown["user"] == {"name": "Cy", "email": "b@x"}


def test_a_pending_change_whose_path_went_is_skipped() -> None:
    state = joined({"todos": [{"id": "t1", "done": False}]})
    state.add_write(1, [Change.set("todos", True, Id("t1"), "done")])
    state.apply_batches([Batch(E, 1, [Change.remove("todos", Id("t1"))])])
    assert state.shown["todos"] == []


def test_writes_across_a_new_epoch() -> None:
    state = joined()
    state.add_write(1, [Change("name", "accepted-not-applied")])
    state.add_write(2, [Change("name", "unanswered")])
    state.pending[0].status, state.pending[0].accepted_sequence = WriteStatus.ACCEPTED, 9
    state.pending[1].status = WriteStatus.SENT
    state.resend_unanswered()
    outcome = state.apply_snapshot(Snapshot(F, 0, {"name": "restarted", "user": None}, {}))
    assert outcome.settled == [(1, 9)]
    assert [(w.write_id, w.status) for w in state.pending] == [(2, WriteStatus.QUEUED)]
    assert state.shown["name"] == "unanswered" and state.confirmed["name"] == "restarted"


def test_against_a_model_of_last_writer_wins() -> None:
    """Random interleavings of host batches, own writes and their answers: once every write
    is settled, the shown value is the host's, and nothing settles twice."""
    rng = random.Random(7)
    for _ in range(200):
        state = joined({"n": 0})
        host_value, sequence, settled, next_id, unsent = 0, 0, set(), 1, []
        for _ in range(30):
            roll = rng.random()
            if roll < 0.4:
                state.add_write(next_id, [Change("n", next_id)])
                unsent.append(next_id)
                next_id += 1
            elif roll < 0.7 and unsent:
                write_id = unsent.pop(0)
                sequence += 1
                host_value = write_id
                refused = rng.random() < 0.3
                if refused:
                    sequence -= 1
                    host_value = state.confirmed["n"]
                    outcome = state.refused(write_id, ValidationFailedError("no"))
                else:
                    _, _, outcome = state.apply_batches([Batch(E, sequence, [Change("n", write_id)], "V", write_id)])
                for w, _ in outcome.settled:
                    assert w not in settled
                    settled.add(w)
            else:
                sequence += 1
                host_value = 1000 + sequence
                state.apply_batches([Batch(E, sequence, [Change("n", host_value)])])
        for write_id in unsent:
            state.refused(write_id, ValidationFailedError("no"))
        assert not state.pending and state.shown["n"] == host_value == state.confirmed["n"]
