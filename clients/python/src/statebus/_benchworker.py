"""The Python side of ``statebus bench``'s Python rows: run by the bench as
``python -m statebus._benchworker ROLE ...``, it prints ``bench ready ...`` and
``bench result key=value ...`` lines as the bench's Swift workers do.

Roles:
    view --control C --count N
        a :class:`statebus.View` of the bench host's ``Bench`` object; counts ``N`` updates
        of ``value`` after its join. The run counts only if the view never resynchronised
        or joined again (so every update was applied, in order) and ends holding the host's
        last value.
    raw-sub --updates E --count N
        the baseline: a pyzmq SUB that receives ``N`` messages numbered 1, 2, 3, ... in
        their first 8 bytes (little-endian), as the Swift raw subscriber does.

Times are ``CLOCK_MONOTONIC`` nanoseconds (``time.monotonic_ns``), the clock the bench reads.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

import zmq

from . import connect
from .view import Changed


def emit(event: str, **fields: Any) -> None:
    words = [f"{key}={str(value).lower() if isinstance(value, bool) else value}" for key, value in fields.items()]
    print("bench", event, *words, flush=True)


async def count_updates(control: str, count: int) -> None:
    async with connect(control, object="Bench", node_name="bench-python-view", timeout=120) as view:
        start = view.sequence
        target = start + count
        reached = asyncio.Event()
        first_at = 0

        def seen(_: Changed) -> None:
            nonlocal first_at
            if first_at == 0:
                first_at = time.monotonic_ns()
            if view.sequence >= target:
                reached.set()

        subscription = view.on_change(seen)
        emit("ready", sequence=start)
        await asyncio.wait_for(reached.wait(), timeout=300)
        end = time.monotonic_ns()
        subscription.cancel()
        final = view["value"] == count and view.sequence == target
        whole = view.resyncs == 0 and view.rejoins == 0 and view.restarted_joins == 0
        emit("result", ok=final and whole, applied=view.sequence - start if whole else "?", resyncs=view.resyncs,
             final=final, first=first_at, end=end)


def raw_subscribe(endpoint: str, count: int) -> None:
    context = zmq.Context()
    subscriber = context.socket(zmq.SUB)
    subscriber.rcvhwm = 100_000
    subscriber.rcvtimeo = 60_000
    subscriber.subscribe(b"")
    subscriber.connect(endpoint)
    emit("ready", endpoint=endpoint)
    expected, first_at, in_order = 1, 0, True
    while expected <= count:
        message = subscriber.recv()
        if first_at == 0:
            first_at = time.monotonic_ns()
        if int.from_bytes(message[:8], "little") != expected:
            in_order = False
            break
        expected += 1
    end = time.monotonic_ns()
    emit("result", ok=in_order, applied=expected - 1, resyncs=0, final=in_order, first=first_at, end=end)
    subscriber.close(linger=0)
    context.term()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m statebus._benchworker")
    roles = parser.add_subparsers(dest="role", required=True)
    view = roles.add_parser("view")
    view.add_argument("--control", required=True)
    view.add_argument("--count", type=int, required=True)
    view.add_argument("--kind", choices=["int"], default="int", help="the property's kind (only Int)")
    raw = roles.add_parser("raw-sub")
    raw.add_argument("--updates", required=True)
    raw.add_argument("--count", type=int, required=True)
    arguments = parser.parse_args(argv)
    try:
        if arguments.role == "view":
            asyncio.run(count_updates(arguments.control, arguments.count))
        else:
            raw_subscribe(arguments.updates, arguments.count)
    except Exception as error:  # the bench reads the reason from this line
        emit("failed", error=repr(error).replace(" ", "_"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
