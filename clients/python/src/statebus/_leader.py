"""Finding the leader of a high-availability group without leaving the host in use.

A leader that lost etcd keeps serving the views it has, read-only, and refuses their writes
``PERSISTENCE_FAILED``; it cannot tell whether another host took over. A view given other
endpoints then asks them (PROTOCOL.md, "Standby hosts", rule 4): :func:`find_leader` says a
plain hello (no view id: nothing is bound) to each at once, on fresh DEALER sockets, and the
first that welcomes it leads. A standby's ``NOT_LEADER`` does not count. The same as the
Swift ``ControlProbe.leader(among:)``.
"""

from __future__ import annotations

import time
from typing import Sequence

import zmq
import zmq.asyncio
from google.protobuf.message import DecodeError

from ._wire import pb
from ._zmq import Socket, SocketFactory


async def find_leader(endpoints: Sequence[str], make_socket: SocketFactory, timeout: float) -> str | None:
    """Asks every endpoint at once whether it leads.

    Args:
        endpoints: the control endpoints to ask (the listed ones other than the host in use).
        make_socket: makes each probe's DEALER socket (closed here, whatever happens).
        timeout: seconds to wait for a welcome.

    Returns:
        the first endpoint whose host answers the hello with a ``Welcome``, or ``None`` when
        none does within ``timeout`` (every one refused, say ``NOT_LEADER``, or stayed
        silent).
    """
    hello = pb.Request(protocol_version=1, request_id=1, hello=pb.Hello()).SerializeToString()
    waiting: dict[Socket, str] = {}
    poller = zmq.asyncio.Poller()
    try:
        for endpoint in endpoints:
            socket = make_socket(zmq.DEALER)
            try:
                socket.connect(endpoint)
                socket.send(hello, zmq.NOBLOCK)
            except zmq.ZMQError:  # a malformed endpoint, or a socket that will not take it
                socket.close()
                continue
            waiting[socket] = endpoint
            poller.register(socket, zmq.POLLIN)
        deadline = time.monotonic() + timeout
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            for socket, _ in await poller.poll(max(1, int(left * 1000))):
                if socket not in waiting:
                    continue
                answered, welcomed = _read(socket)
                if welcomed:
                    return waiting[socket]
                if answered:  # a refusal: this one does not lead
                    poller.unregister(socket)
                    socket.close()
                    del waiting[socket]
        return None
    finally:
        for socket in waiting:
            socket.close()


def _read(socket: Socket) -> tuple[bool, bool]:
    """Reads what the socket holds.

    Returns:
        whether the host answered the hello, and whether that answer is a welcome. A reply
        with request id 0 (to a request the host could not read) is an answer too.
    """
    while True:
        try:
            frames = socket.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            return False, False
        reply = pb.Reply()
        try:
            reply.ParseFromString(frames[-1])
        except DecodeError:
            continue
        if reply.request_id <= 1:
            return True, reply.WhichOneof("body") == "welcome"
