"""StateBus for Python: a live replica of a StateBus host's model object.

.. code-block:: python

    import asyncio, statebus

    async def main():
        async with statebus.connect("ipc:///run/user/1000/statebus/profile.control", object="Profile") as profile:
            print(profile.user)                     # the host's value, live
            await profile.set(user={"username": "bea", "email": "bea@example.org"})  # shown at once; resolves when accepted
            async for change in profile.changes():  # {"user": ...} as the host publishes
                print(change.values)

    asyncio.run(main())

The view joins with a snapshot, applies the host's batches in order, detects gaps and a
silent host and resynchronises by itself, and shows ``stale`` meanwhile. Writes are
optimistic; a refused write rolls back and raises the host's reason as a
:class:`StateBusError` subclass. See README.md beside this package, and
``proto/PROTOCOL.md`` for the protocol.
"""

from __future__ import annotations

import os
from typing import Any, Generator

from .errors import *  # noqa: F403 - the error classes are part of the API
from ._endpoints import ControlArgument
from .errors import __all__ as _errors
from .keys import KeyFileError, Keys
from .values import Change, Id, Operation
from .view import Changed, ConnectionState, Subscription, View

__version__ = "0.1.0"


class _Connecting:
    """What :func:`connect` returns: ``await`` it for a live view, or use it with
    ``async with`` to close the view at the block's end."""

    def __init__(self, view: View, timeout: float | None) -> None:
        self._view, self._timeout = view, timeout

    def __await__(self) -> Generator[Any, None, View]:
        return self._view.start(self._timeout).__await__()

    async def __aenter__(self) -> View:
        return await self._view.start(self._timeout)

    async def __aexit__(self, *exc: object) -> None:
        await self._view.close()


def connect(
    control: ControlArgument,
    object: str,
    *,
    protocol_version: int = 2,
    key: str | os.PathLike[str] | None = None,
    host_key: str | os.PathLike[str] | None = None,
    view_id: str | None = None,
    node_name: str = "python",
    confirms_by_echo: bool = False,
    write_timeout: float = 30.0,
    timeout: float | None = None,
    **options: Any,
) -> _Connecting:
    """Joins ``object`` of the host whose control endpoint is ``control``.

    ``async with statebus.connect(...) as view:`` (or ``view = await statebus.connect(...)``
    and ``await view.close()`` later) gives a :class:`View` once it is live.

    Args:
        control: the host's (or relay's) control endpoint, such as
            ``ipc:///run/user/1000/statebus/statebus.control`` or ``tcp://10.0.0.5:7000``;
            or the control endpoints of a high-availability group's hosts
            (``statebus host --ha``), separated by commas (``"tcp://a:7000,tcp://b:7000"``)
            or as a list: the view says hello to one at a time, follows the leader a standby
            names, and moves on to the next when one falls silent (PROTOCOL.md,
            "Standby hosts").
        object: the object's name.
        protocol_version: 2 (default) or 1.
        key: this view's CURVE secret key file (``statebus keygen NAME`` writes ``NAME.key``);
            needs ``host_key``.
        host_key: the host's public key: its ``.pub`` file, or the 40-character key.
        view_id: the view's id (default: a fresh UUID). Unique per running view.
        node_name: the name the host logs and ``statebus views`` lists.
        confirms_by_echo: ask the host to confirm accepted writes by their publication only
            (PROTOCOL.md section 8, "Confirmation by echo"); off by default.
        write_timeout: seconds a write or call waits for its answer before it fails.
        timeout: seconds to wait for the first live state (default: ``STATEBUS_TIMEOUT``,
            else 10).
        options: passed to :class:`View`, the view's limits among them:
            ``max_writes_in_flight`` (1,000 writes sent and unanswered; later ones wait in
            the view, in order), ``max_queued_writes`` (100,000 writes waiting; past it a
            write raises :class:`OverloadedError` at once), ``max_join_buffer_bytes`` (64 MiB,
            the Swift replica's ``ReplicaLimits.maxJoinBufferBytes``: how many bytes of
            publications the view keeps while it joins or resyncs, until its snapshot is
            applied; past it the view drops them and asks for a new snapshot, so nothing is
            missed or applied twice, and counts it in ``view.restarted_joins``);
            and ``context``, ``logger``.

    Raises:
        ValueError: a malformed argument, such as an empty entry in ``control`` (before
            anything is sent).
        KeyFileError: an unusable key file.
        StateBusTimeoutError, StateBusError: when awaited: not live in time, or refused.
    """
    if (key is None) != (host_key is None):
        raise ValueError("key and host_key go together: this view's secret key file and the host's public key")
    keys = Keys.from_files(key, host_key) if key is not None and host_key is not None else None
    view = View(control, object, protocol_version=protocol_version, view_id=view_id, node_name=node_name, keys=keys,
                confirms_by_echo=confirms_by_echo, write_timeout=write_timeout, **options)
    return _Connecting(view, timeout)


from .sync import SyncView, connect_sync  # noqa: E402 - sync builds on connect

__all__ = [
    "connect",
    "connect_sync",
    "View",
    "SyncView",
    "Changed",
    "ConnectionState",
    "Subscription",
    "Change",
    "Id",
    "Operation",
    "Keys",
    "KeyFileError",
    *_errors,
]
