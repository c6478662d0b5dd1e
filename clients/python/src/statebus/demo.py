"""The Python view of the StateBus demo's shared-text app (seeds/003), the counterpart of
``statebus node shared-text --role view``.

Run it as ``python -m statebus.demo shared-text``. It joins the host's ``SharedData``, prints
``[NAME] NAME view: TEXT`` whenever the text changes (the Swift view's rendering), and sets
the text to each line it reads from standard input. Under ``statebus launch`` (and so in
``statebus demo``) the launcher's environment gives it its node name and the host
(``STATEBUS_NODE``, ``STATEBUS_CONTROL``); by hand, give them as options::

    statebus node shared-text --role host --control ipc:///tmp/text &
    python -m statebus.demo shared-text --control ipc:///tmp/text --name py

A write the host refuses is printed (``[NAME] refused: ...``) and rolled back; the view
goes on. It ends at the end of its input or on SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading

from . import connect
from .errors import StateBusError
from .view import Changed


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m statebus.demo",
        description="A Python view of the StateBus demo's shared text: shows it, and sets it to each line typed.",
        epilog="example: python -m statebus.demo shared-text --control ipc:///tmp/text --name py",
    )
    parser.add_argument("app", choices=["shared-text"], help="the demo app (only shared-text has a Python view)")
    parser.add_argument(
        "--control",
        default=os.environ.get("STATEBUS_CONTROL"),
        help="the host's control endpoint, or several separated by commas (default: $STATEBUS_CONTROL)",
    )
    parser.add_argument("--name", default=os.environ.get("STATEBUS_NODE", "python"), help="this view's name (default: $STATEBUS_NODE, else python)")
    arguments = parser.parse_args(argv)
    if not arguments.control:
        parser.error("no host to join: give --control ENDPOINT, or run under statebus launch (which sets STATEBUS_CONTROL)")
    return arguments


def _standard_input_lines(loop: asyncio.AbstractEventLoop) -> "asyncio.Queue[str | None]":
    """Standard input's lines, read on a thread of their own (a blocking read must not hold
    the event loop); ``None`` at the end of input."""
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def read() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line.rstrip("\n"))
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=read, name="statebus demo input", daemon=True).start()
    return lines


async def shared_text(control: str, name: str) -> None:
    """Shows and edits ``SharedData.sharedText`` until the input ends or SIGTERM comes."""

    def say(text: str) -> None:
        print(f"[{name}] {text}", flush=True)

    loop = asyncio.get_running_loop()
    async with connect(control, object="SharedData", node_name=name) as shared:
        # From here on SIGTERM ends the view cleanly (before, while joining, it ends the
        # process at once, as by default).
        stopping = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stopping.set)
        shown: str | None = None

        def render(_: Changed | None = None) -> None:
            nonlocal shown
            text = shared.sharedText
            if text != shown:  # like a SwiftUI body: rendered again only when it changed
                shown = text
                say(f"{name} view: {text}")

        render()
        subscription = shared.on_change(render)
        writes: set[asyncio.Task[None]] = set()

        async def settle(write: "asyncio.Future[int]") -> None:
            try:
                await write
            except StateBusError as refusal:
                say(f"refused: {refusal}")

        def edit(text: str) -> None:
            try:
                write = shared.set(sharedText=text)
            except StateBusError as refusal:  # refused before sending (too large, overloaded)
                say(f"refused: {refusal}")
                return
            task = asyncio.ensure_future(settle(write))
            writes.add(task)
            task.add_done_callback(writes.discard)

        lines = _standard_input_lines(loop)
        stopped = asyncio.ensure_future(stopping.wait())
        try:
            while True:
                next_line = asyncio.ensure_future(lines.get())
                done, _ = await asyncio.wait({next_line, stopped}, return_when=asyncio.FIRST_COMPLETED)
                if next_line not in done:
                    next_line.cancel()
                    break
                line = next_line.result()
                if line is None:
                    break
                edit(line)
            # At the end of input the edits typed last still get their answers (within the
            # view's write timeout) before the view closes; a stop does not wait.
            if writes and not stopping.is_set():
                await asyncio.wait(set(writes), timeout=shared.write_timeout)
        finally:
            stopped.cancel()
            subscription.cancel()
            loop.remove_signal_handler(signal.SIGTERM)
    say("closed")


def main(argv: list[str] | None = None) -> int:
    """The command line: ``python -m statebus.demo shared-text [--control C] [--name N]``."""
    arguments = _arguments(argv)
    try:
        asyncio.run(shared_text(arguments.control, arguments.name))
    except StateBusError as error:
        print(f"statebus.demo: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
