"""The join buffer: what a view receives while it joins, bounded in bytes.

Between subscribing to the updates and applying its snapshot (PROTOCOL.md section 5, 17.3
in version 2; and again during a resync), a view keeps the publications that arrive, to
apply those newer than the snapshot once it is complete. This is the Swift replica's
``JoinBuffer`` (``Sources/StateBus/Replica/JoinBuffer.swift``): kept in order, one entry per
publication (its decoded batches), and bounded by the publications' size as received
(``ReplicaLimits.maxJoinBufferBytes``, 64 MiB by default). Past the bound it drops
everything it holds: what was dropped may be newer than the snapshot under way, so the join
must start again from a new snapshot (the engine's ``_restart_join``).
"""

from __future__ import annotations

from .codec import Batch

__all__ = ["JoinBuffer", "DEFAULT_MAX_JOIN_BUFFER_BYTES"]

#: The default bound, the Swift replica's (``ReplicaLimits.maxJoinBufferBytes``).
DEFAULT_MAX_JOIN_BUFFER_BYTES = 64 << 20


class JoinBuffer:
    """Publications kept while joining, in order, with their encoded size.

    Args:
        max_bytes: the bound on the publications' total size (their frames as received).
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_JOIN_BUFFER_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: list[tuple[list[Batch], int]] = []
        #: The encoded size of what it holds.
        self.bytes = 0

    def __len__(self) -> int:
        """How many publications it holds."""
        return len(self._entries)

    def append(self, batches: list[Batch], size: int) -> bool:
        """Keeps one publication's batches, of ``size`` encoded bytes.

        Returns:
            ``False`` when that passed the bound: the buffer is then empty, and the join
            must start again from a new snapshot.
        """
        self.bytes += size
        if self.bytes > self.max_bytes:
            self.reset()
            return False
        self._entries.append((batches, size))
        return True

    def reset(self, keeping: list[Batch] | None = None, size: int = 0) -> None:
        """Empties the buffer, keeping ``keeping`` (the batches of ``size`` bytes from the
        publication that revealed a gap: its newer batches apply after the snapshot)."""
        self._entries = [(keeping, size)] if keeping else []
        self.bytes = size if keeping else 0

    def take(self) -> list[tuple[list[Batch], int]]:
        """Takes every publication (its batches and size), in order, and empties the buffer."""
        entries = self._entries
        self.reset()
        return entries
