"""CURVE keys, read from the files ``statebus keygen NAME`` writes: ``NAME.key`` (the secret
key, mode 0600) and ``NAME.pub`` (the public key), each 40 characters of Z85 on a line of its
own after ``#`` comment lines. The same rules as the Swift ``CurveKeyFile``: a secret key
file others may read, or another user owns, is refused.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import zmq
from zmq.utils import z85

from ._zmq import Socket

__all__ = ["Keys", "KeyFileError", "load_secret_key", "load_public_key"]


class KeyFileError(ValueError):
    """A key file that cannot be used: which file and why."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"key file {path}: {message}")
        self.path = path


def _is_key(text: str) -> bool:
    if len(text) != 40:
        return False
    try:
        return len(z85.decode(text.encode())) == 32
    except (ValueError, KeyError):  # not Z85 (pyzmq raises KeyError for a character outside it)
        return False


def _key_text(path: str) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise KeyFileError(path, f"cannot read it: {error.strerror} (make a key pair with `statebus keygen NAME`)") from None
    for line in text.splitlines():
        line = line.strip()
        if _is_key(line):  # Z85 has '#' in its alphabet: test for a key before a comment
            return line
        if not line or line.startswith("#"):
            continue
        return line
    raise KeyFileError(path, "it holds no key (only comments or nothing)")


def load_secret_key(path: str | os.PathLike[str]) -> tuple[bytes, bytes]:
    """The (public, secret) Z85 key pair of a secret key file.

    Raises:
        KeyFileError: the file is missing, readable by its group or others, owned by another
            user, or holds no valid key.
    """
    path = os.fspath(path)
    try:
        status = os.stat(path)
    except OSError as error:
        raise KeyFileError(path, f"cannot read it: {error.strerror} (make a key pair with `statebus keygen NAME`)") from None
    if status.st_uid != os.geteuid():
        raise KeyFileError(path, f"it belongs to another user (uid {status.st_uid}); a secret key must be owned by the user who uses it")
    mode = stat.S_IMODE(status.st_mode)
    if mode & 0o077:
        raise KeyFileError(
            path, f"its mode is 0{mode:o}: a secret key must be readable by its owner only; run `chmod 600 {path}`"
        )
    secret = _key_text(path)
    if not _is_key(secret):
        raise KeyFileError(path, "it holds no valid CURVE secret key (expected 40 characters of Z85)")
    return zmq.curve_public(secret.encode()), secret.encode()


def load_public_key(path_or_key: str | os.PathLike[str]) -> bytes:
    """A Z85 public key: from a ``.pub`` file (or a ``.key`` file, whose public half is
    derived), or the 40-character key itself when ``path_or_key`` is no file.

    Raises:
        KeyFileError: when it is neither.
    """
    text = os.fspath(path_or_key)
    if not os.path.exists(text):
        if _is_key(text):
            return text.encode()
        raise KeyFileError(text, "no such file, and not a 40-character Z85 public key either")
    if text.endswith(".key"):
        return load_secret_key(text)[0]
    key = _key_text(text)
    if not _is_key(key):
        raise KeyFileError(text, "it holds no valid CURVE public key (expected 40 characters of Z85)")
    return key.encode()


@dataclass(frozen=True)
class Keys:
    """A view's CURVE keys: its own pair and the host's public key. Both of the view's
    sockets become CURVE clients with them (PROTOCOL.md section 2, "Security").

    Build it with :meth:`from_files`, or pass ``key=`` and ``host_key=`` to
    :func:`statebus.connect`, as ``statebus`` takes ``--key`` and ``--host-key``.
    """

    public: bytes
    secret: bytes
    host_public: bytes

    @classmethod
    def from_files(cls, key: str | os.PathLike[str], host_key: str | os.PathLike[str]) -> "Keys":
        """Reads the view's secret key file and the host's public key (file or key)."""
        public, secret = load_secret_key(key)
        return cls(public, secret, load_public_key(host_key))

    def apply(self, socket: Socket) -> None:
        """Makes ``socket`` a CURVE client of the host (before it connects)."""
        socket.curve_serverkey = self.host_public
        socket.curve_publickey = self.public
        socket.curve_secretkey = self.secret
