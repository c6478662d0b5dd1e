"""A blocking facade for scripts: :func:`connect_sync` runs a :class:`~statebus.View` on an
event loop in a thread of its own and waits for each operation.

.. code-block:: python

    with statebus.connect_sync(control, object="Profile") as profile:
        print(profile.username)
        profile.set(username="bea")      # returns once the host accepted it (or raises)
"""

from __future__ import annotations

import asyncio
import copy
import threading
from typing import Any, Awaitable, Callable, Iterator, TypeVar

from ._endpoints import ControlArgument
from .errors import StateBusTimeoutError, UnknownPropertyError
from .values import Change, Step
from .view import Changed, ConnectionState, View, default_timeout

__all__ = ["SyncView", "connect_sync"]

T = TypeVar("T")


class SyncView:
    """A :class:`~statebus.View` for code without an event loop. Reads (attributes, items,
    :meth:`values`) are safe from any thread and never block; each write or call blocks
    until settled and returns or raises what the asynchronous one would.

    ``timeout`` (default ``STATEBUS_TIMEOUT`` or 10 s) bounds every blocking method; a
    write's own ``write_timeout`` still applies on the host side of the wait.
    """

    def __init__(self, view: View, loop: asyncio.AbstractEventLoop, thread: threading.Thread, timeout: float) -> None:
        self._view, self._loop, self._thread, self._timeout = view, loop, thread, timeout

    # -- plumbing ------------------------------------------------------------------------

    def _run(self, make: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        async def go() -> T:
            return await make()

        future = asyncio.run_coroutine_threadsafe(go(), self._loop)
        wait = self._timeout if timeout is None else timeout
        try:
            return future.result(wait)
        except TimeoutError:
            future.cancel()
            raise StateBusTimeoutError(f"no result within {wait:g} s", object=self._view.object) from None

    # -- reading -------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        view: View = self.__dict__["_view"]
        if view._schema is None or view._schema.property(name) is None:
            raise UnknownPropertyError(f"{view.object!r} has no property {name!r}", object=view.object, property=name)
        return copy.deepcopy(view._shown_snapshot.get(name))  # an immutable snapshot, swapped whole

    def __getitem__(self, name: str) -> Any:
        return self.__getattr__(name)

    def values(self) -> dict[str, Any]:
        """Every property's shown value (a copy)."""
        return copy.deepcopy(self._view._shown_snapshot)

    @property
    def view(self) -> View:
        """The asynchronous view underneath (use it only on its loop)."""
        return self._view

    @property
    def state(self) -> ConnectionState:
        """connecting, syncing, live, stale or closed."""
        return self._view.state

    @property
    def stale(self) -> bool:
        """True while the view joins its host again (the values shown may be old)."""
        return self._view.stale

    @property
    def sequence(self) -> int:
        """The host sequence the confirmed state reflects."""
        return self._view.sequence

    @property
    def control_endpoint(self) -> str:
        """The control endpoint in use (the leader's, when given several)."""
        return self._view.control_endpoint

    def version(self, name: str) -> int:
        """A property's version (see :meth:`View.version`)."""
        return self._run(lambda: _now(self._view.version(name)))

    # -- writing -------------------------------------------------------------------------

    def set(self, **values: Any) -> int:
        """:meth:`View.set`, blocking: returns the sequence the host applied it at."""
        return self._run(lambda: self._view.set(**values), self._view.write_timeout + 1)

    def set_at(self, property: str, *path: Step, value: Any, expected_version: int | None = None) -> int:
        """:meth:`View.set_at`, blocking."""
        return self._run(lambda: self._view.set_at(property, *path, value=value, expected_version=expected_version), self._view.write_timeout + 1)

    def compare_and_set(self, property: str, value: Any, *, version: int) -> int:
        """:meth:`View.compare_and_set`, blocking."""
        return self._run(lambda: self._view.compare_and_set(property, value, version=version), self._view.write_timeout + 1)

    def insert(self, property: str, element: Any, *path: Step, position: int | None = None) -> int:
        """:meth:`View.insert`, blocking."""
        return self._run(lambda: self._view.insert(property, element, *path, position=position), self._view.write_timeout + 1)

    def remove(self, property: str, *path: Step) -> int:
        """:meth:`View.remove`, blocking."""
        return self._run(lambda: self._view.remove(property, *path), self._view.write_timeout + 1)

    def move(self, property: str, *path: Step, position: int) -> int:
        """:meth:`View.move`, blocking."""
        return self._run(lambda: self._view.move(property, *path, position=position), self._view.write_timeout + 1)

    def write(self, *changes: Change) -> int:
        """:meth:`View.write`, blocking."""
        return self._run(lambda: self._view.write(*changes), self._view.write_timeout + 1)

    def call(self, action: str, *arguments: Any) -> Any:
        """:meth:`View.call`, blocking: returns the action's result."""
        return self._run(lambda: self._view.call(action, *arguments), self._view.write_timeout + 1)

    # -- observing -----------------------------------------------------------------------

    def on_change(self, callback: Callable[[Changed], None]) -> Callable[[], None]:
        """Calls ``callback`` on the view's thread after every change; returns a function
        that stops it. Keep the callback short: the view waits for it."""
        subscription = self._run(lambda: _now(self._view.on_change(callback)))

        def stop() -> None:
            self._loop.call_soon_threadsafe(subscription.cancel)

        return stop

    def wait_for(self, predicate: Callable[["SyncView"], bool], timeout: float | None = None) -> None:
        """Blocks until ``predicate(view)`` holds (:meth:`View.wait_for`)."""
        wait = self._timeout if timeout is None else timeout
        self._run(lambda: self._view.wait_for(lambda _: predicate(self), wait), wait + 1)

    def changes(self, timeout: float | None = None) -> Iterator[Changed]:
        """Each change, as :meth:`View.changes` yields them; stops when the view closes, or
        when nothing changed for ``timeout`` seconds (default: never)."""
        import queue

        items: queue.Queue[Changed | None] = queue.Queue()
        stop = self.on_change(items.put)
        try:
            while True:
                try:
                    change = items.get(timeout=timeout)
                except queue.Empty:
                    return
                if change is None:
                    return
                yield change
                if change.state is ConnectionState.CLOSED:
                    return
        finally:
            stop()

    # -- closing -------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the view and stops its thread. Idempotent."""
        if not self._thread.is_alive():
            return
        try:
            self._run(self._view.close)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(self._timeout)
            if not self._thread.is_alive():
                self._loop.close()

    def __enter__(self) -> "SyncView":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return repr(self._view).replace("statebus.View", "statebus.SyncView")


async def _now(value: T) -> T:
    return value


def connect_sync(control: ControlArgument, object: str, *, timeout: float | None = None, **options: Any) -> SyncView:
    """:func:`statebus.connect`, blocking: returns a live :class:`SyncView` (use it with
    ``with`` to close it). Takes the same arguments: ``control`` is one control endpoint,
    or several (``"tcp://a:7000,tcp://b:7000"``, or a list) of which the view follows the
    leader.

    Raises:
        StateBusTimeoutError, StateBusError: not live in time, or refused by the host.
    """
    from . import connect

    wait = default_timeout() if timeout is None else timeout
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name=f"statebus {object}", daemon=True)
    thread.start()
    try:
        connecting = connect(control, object, timeout=wait, **options)

        async def start() -> View:
            return await connecting

        view = asyncio.run_coroutine_threadsafe(start(), loop).result(wait + 5)
    except BaseException:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        if not thread.is_alive():
            loop.close()
        raise
    return SyncView(view, loop, thread, wait)
