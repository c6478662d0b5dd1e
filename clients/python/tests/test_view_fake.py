"""The view's I/O shell against an in-process fake host (tests/fakehost.py): join, follow,
writes, refusals, a lost run, a lost answer, a new epoch, version 1, the sync facade."""

from __future__ import annotations

import asyncio
import tempfile
from typing import Iterator

import pytest

import statebus
from fakehost import FakeHost


@pytest.fixture
def host() -> Iterator[FakeHost]:
    with tempfile.TemporaryDirectory() as folder:
        fake = FakeHost(folder, "Profile", {"username": "anna", "email": "anna@example.com", "count": 0})
        try:
            yield fake
        finally:
            fake.close()


def run(coroutine):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coroutine, 30))


@pytest.mark.parametrize("version", [1, 2])
def test_join_follow_write(host: FakeHost, version: int) -> None:
    async def go() -> None:
        async with statebus.connect(host.control, object="Profile", protocol_version=version) as profile:
            assert profile.username == "anna" and profile.live and not profile.stale
            host.change("count", 5)
            await profile.wait_for(lambda p: p.count == 5)
            assert profile.version("count") == 1
            future = profile.set(username="bea", email="bea@example.org")
            assert profile.username == "bea"  # optimistic
            sequence = await future
            assert sequence == 2 and profile.confirmed("username") == "bea" and profile.pending_writes == 0
    run(go())


def test_a_refused_write_rolls_back_with_the_hosts_reason(host: FakeHost) -> None:
    host.validate = lambda name, value: "an email address needs an @" if name == "email" and "@" not in value else None

    async def go() -> None:
        async with statebus.connect(host.control, object="Profile") as profile:
            seen = []
            profile.on_change(lambda change: seen.append(change.values))
            future = profile.set(email="nope")
            assert profile.email == "nope"
            with pytest.raises(statebus.ValidationFailedError) as refused:
                await future
            assert refused.value.message == "an email address needs an @" and refused.value.property == "email"
            assert profile.email == "anna@example.com"
            assert seen == [{"email": "nope"}, {"email": "anna@example.com"}]
    run(go())


def test_bad_arguments_are_refused_before_sending(host: FakeHost) -> None:
    async def go() -> None:
        async with statebus.connect(host.control, object="Profile") as profile:
            with pytest.raises(statebus.UnknownPropertyError):
                profile.set(nope=1)
            with pytest.raises(statebus.UnknownPropertyError):
                profile.nope
            with pytest.raises(TypeError):
                profile.set(username={1, 2})
            with pytest.raises(ValueError):
                profile.set()
            with pytest.raises(statebus.UnknownActionError):
                profile.call("nothing")
            assert host.writes_seen == []
    run(go())


def test_a_lost_run_is_a_gap_and_the_view_resyncs(host: FakeHost) -> None:
    async def go() -> None:
        async with statebus.connect(host.control, object="Profile") as profile:
            host.drop_runs = 1
            host.change("count", 1)  # lost
            host.change("count", 2)  # arrives with a gap before it
            await profile.wait_for(lambda p: p.count == 2 and p.live)
            assert profile.resyncs >= 1 and profile.sequence == 2
    run(go())


def test_a_lost_tail_is_found_by_the_heartbeat(host: FakeHost) -> None:
    async def go() -> None:
        async with statebus.connect(host.control, object="Profile") as profile:
            host.drop_runs = 1
            host.change("count", 9)
            await profile.wait_for(lambda p: p.count == 9)
            assert profile.resyncs == 1
    run(go())


def test_an_echo_settles_a_write_whose_answer_is_lost(host: FakeHost) -> None:
    async def go() -> None:
        async with statebus.connect(host.control, object="Profile") as profile:
            host.answer_writes = False
            assert await profile.set(count=3) == 1
    run(go())


def test_a_new_epoch_rejoins_and_shows_stale_meanwhile(host: FakeHost) -> None:
    async def go() -> None:
        async with statebus.connect(host.control, object="Profile") as profile:
            states = []
            profile.on_change(lambda change: states.append(change.state))
            epoch = profile.epoch
            host.restart()
            await profile.wait_for(lambda p: p.epoch != epoch and p.live)
            assert statebus.ConnectionState.STALE in states and profile.rejoins == 1
    run(go())


def test_a_probe_of_another_epoch_is_not_a_restart(host: FakeHost) -> None:
    async def go() -> None:
        async with statebus.connect(host.control, object="Profile") as profile:
            epoch = profile.epoch
            host.probe(profile.view_id, epoch=epoch + 1)
            # The write's answer comes on the control connection after the probe, so the
            # probe has been read when the write is confirmed.
            assert await profile.set(count=5) == 1
            assert profile.epoch == epoch and profile.rejoins == 0 and profile.live
    run(go())


def test_changes_iterates_until_closed(host: FakeHost) -> None:
    async def go() -> None:
        profile = await statebus.connect(host.control, object="Profile")
        got = []

        async def consume() -> None:
            async for change in profile.changes():
                got.append(change)

        consumer = asyncio.create_task(consume())
        await asyncio.sleep(0)
        host.change("count", 1)
        await profile.wait_for(lambda p: p.count == 1)
        await profile.close()
        await asyncio.wait_for(consumer, 5)
        assert {"count": 1} in [c.values for c in got] and got[-1].state is statebus.ConnectionState.CLOSED
    run(go())


def test_unknown_object_is_refused_at_connect(host: FakeHost) -> None:
    async def go() -> None:
        with pytest.raises(statebus.UnknownObjectError):
            await statebus.connect(host.control, object="Nope", timeout=5)
    run(go())


def test_no_host_times_out() -> None:
    async def go() -> None:
        with tempfile.TemporaryDirectory() as folder:
            with pytest.raises(statebus.StateBusTimeoutError):
                await statebus.connect(f"ipc://{folder}/none", object="X", timeout=0.5)
    run(go())


def test_the_sync_facade(host: FakeHost) -> None:
    with statebus.connect_sync(host.control, object="Profile") as profile:
        assert profile.username == "anna"
        assert profile.set(username="cy") == 1
        assert profile.username == "cy"
        host.change("count", 4)
        profile.wait_for(lambda p: p.count == 4)
        assert profile.values()["count"] == 4


def test_assigning_a_property_says_how_to_write(host: FakeHost) -> None:
    async def go() -> None:
        async with statebus.connect(host.control, object="Profile") as profile:
            with pytest.raises(AttributeError, match=r"view.set\(username=...\)"):
                profile.username = "x"
            assert profile.username == "anna" and profile["email"] == "anna@example.com"
    run(go())


def test_not_joined_means_a_new_connection_and_the_write_again(host: FakeHost) -> None:
    async def go() -> None:
        async with statebus.connect(host.control, object="Profile") as profile:
            host.forget_views()
            assert await profile.set(count=1) == 1
            assert profile.rejoins == 1
            write_id = host.writes_seen[-1][1]
            assert host.writes_seen == [(profile.view_id, write_id)] * 2  # refused once, then applied once
            assert host.applied == [(profile.view_id, write_id)]
    run(go())


def test_confirmation_by_echo_and_a_lost_echo(host: FakeHost) -> None:
    async def go() -> None:
        async with statebus.connect(host.control, object="Profile", confirms_by_echo=True) as profile:
            assert await profile.set(count=1) == 1  # no answer: the echo settles it
            host.drop_runs = 1
            write = profile.set(count=2)  # its echo is lost: the heartbeat shows the gap
            assert await write == 2
            assert profile.resyncs == 1 and profile.count == 2
            write_id = host.applied[-1][1]
            assert host.writes_seen.count((profile.view_id, write_id)) == 2  # sent again, answered from the ledger
            assert host.applied.count((profile.view_id, write_id)) == 1
    run(go())


@pytest.mark.parametrize("version", [1, 2])
def test_the_join_buffers_runs_and_skips_those_in_the_snapshot(host: FakeHost, version: int) -> None:
    """Runs published around the snapshot reach the view before it: the one the snapshot
    holds is skipped, the later one applied from the buffer, with no resync."""
    host.changes_around_snapshot = [("count", 1), ("count", 2)]

    async def go() -> None:
        async with statebus.connect(host.control, object="Profile", protocol_version=version) as profile:
            assert (profile.count, profile.sequence, profile.version("count")) == (2, 2, 2)
            assert profile.resyncs == 0 and profile.rejoins == 0
    run(go())


@pytest.mark.parametrize("version", [1, 2])
def test_a_join_under_a_stream_larger_than_the_join_buffer_converges(host: FakeHost, version: int) -> None:
    """More bytes of runs arrive during the snapshot than ``max_join_buffer_bytes`` allows
    (300 runs of some 30 bytes, twice, against 2,000 bytes): the view drops what it buffered
    and asks for a new snapshot, as the Swift replica does, until one completes within the
    bound; it then holds exactly the host's state (nothing missed or applied twice) and
    follows it."""
    host.streams_during_snapshots = [300, 300]

    async def go() -> None:
        async with statebus.connect(host.control, object="Profile", protocol_version=version,
                                    max_join_buffer_bytes=2000) as profile:
            assert profile.restarted_joins >= 1 and host.snapshot_requests >= 2
            assert (profile.count, profile.sequence, profile.version("count")) == (600, 600, 600)
            assert profile.resyncs == 0 and profile.rejoins == 0 and profile._buffer.bytes == 0
            host.change("count", -1)
            await profile.wait_for(lambda p: p.count == -1)
            assert profile.sequence == 601
    run(go())


def test_the_join_buffer_bound_is_checked(host: FakeHost) -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            statebus.View(host.control, "Profile", max_join_buffer_bytes=bad)
    assert statebus.View(host.control, "Profile")._buffer.max_bytes == 64 << 20  # the Swift default


def test_the_write_queue_is_bounded(host: FakeHost) -> None:
    async def go() -> None:
        async with statebus.connect(host.control, object="Profile", max_queued_writes=3, max_writes_in_flight=1) as profile:
            host.answer_writes = False
            host.drop_runs = 10  # nothing settles: the writes stay pending
            futures = [profile.set(count=n) for n in range(3)]
            with pytest.raises(statebus.OverloadedError):
                profile.set(count=9)
            assert profile.count == 2  # the refused write was never shown
            for future in futures:
                future.cancel()
    run(go())


@pytest.mark.parametrize(
    "control,announced,expected",
    [
        ("tcp://10.0.0.5:7000", "tcp://0.0.0.0:41233", "tcp://10.0.0.5:41233"),
        ("tcp://10.0.0.5:7000", "tcp://*:41233", "tcp://10.0.0.5:41233"),
        ("tcp://[::1]:7000", "tcp://[::]:41233", "tcp://[::1]:41233"),
        ("tcp://10.0.0.5:7000", "tcp://192.0.2.7:7001", "tcp://192.0.2.7:7001"),
        ("ipc:///run/x.control", "tcp://0.0.0.0:41233", "tcp://0.0.0.0:41233"),
    ],
)
def test_wildcard_substitution(control: str, announced: str, expected: str) -> None:
    # PROTOCOL.md section 2, "Wildcard substitution (view side)".
    assert statebus.View(control, "X")._updates_endpoint(announced) == expected
