"""The join buffer's bound in bytes (statebus._joinbuffer), as the Swift ``JoinBuffer``."""

from __future__ import annotations

from statebus._joinbuffer import DEFAULT_MAX_JOIN_BUFFER_BYTES, JoinBuffer
from statebus.codec import Batch


def batches(sequence: int) -> list[Batch]:
    return [Batch(epoch=1, sequence=sequence, changes=[])]


def test_the_default_is_the_swift_replicas() -> None:
    assert DEFAULT_MAX_JOIN_BUFFER_BYTES == 64 * 1024 * 1024 == JoinBuffer().max_bytes


def test_it_keeps_publications_in_order_up_to_the_bound() -> None:
    buffer = JoinBuffer(100)
    assert buffer.append(batches(1), 60) and buffer.append(batches(2), 40)
    assert (len(buffer), buffer.bytes) == (2, 100)  # exactly the bound still fits
    assert [(b[0].sequence, size) for b, size in buffer.take()] == [(1, 60), (2, 40)]
    assert (len(buffer), buffer.bytes) == (0, 0)


def test_past_the_bound_it_drops_everything() -> None:
    buffer = JoinBuffer(100)
    assert buffer.append(batches(1), 60)
    assert not buffer.append(batches(2), 41)
    assert (len(buffer), buffer.bytes, buffer.take()) == (0, 0, [])
    assert buffer.append(batches(3), 100)  # and starts again from nothing
    assert not JoinBuffer(10).append(batches(1), 11)  # one publication alone can pass it


def test_a_reset_keeps_the_publication_that_revealed_a_gap() -> None:
    buffer = JoinBuffer(100)
    buffer.append(batches(1), 30)
    buffer.reset(batches(5), 70)
    assert (len(buffer), buffer.bytes) == (1, 70)
    assert not buffer.append(batches(6), 31)
    buffer.reset([], 50)  # nothing to keep: empty
    assert (len(buffer), buffer.bytes) == (0, 0)
