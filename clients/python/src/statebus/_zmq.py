"""The pyzmq types the view uses, named once: its sockets are pyzmq's plain (not asyncio)
sockets, whose ``recv`` gives ``bytes``, polled by a ``zmq.asyncio.Poller``; the context
that makes them. Only for annotations (strings, so any pyzmq release the package takes
imports them)."""

from __future__ import annotations

from typing import Callable, TypeAlias

import zmq

__all__ = ["Socket", "Context", "SocketFactory"]

Socket: TypeAlias = "zmq.Socket[bytes]"
Context: TypeAlias = "zmq.Context[zmq.Socket[bytes]]"
#: Makes a socket of a kind (``zmq.DEALER``) the way the view makes its own: linger 0, the
#: message size limit, the view's keys.
SocketFactory: TypeAlias = "Callable[[int], zmq.Socket[bytes]]"
