"""A replica's state, as a pure state machine: confirmed values, pending writes, the values
shown, and what each arriving snapshot, batch or answer does to them (PROTOCOL.md sections
6 and 8, "The rule for unacknowledged writes").

No sockets, no clocks, no futures: each event returns an :class:`Outcome` saying which
shown values changed and which writes are settled; the view (``view.py``) acts on it. The
unit tests drive this class directly.
"""

from __future__ import annotations

import copy
import enum
from dataclasses import dataclass, field
from typing import Any, Iterable

from .codec import Batch, Snapshot
from .errors import StateBusError
from .values import Change, Operation, PathError, apply_change, copied

__all__ = ["WriteStatus", "PendingWrite", "Outcome", "ReplicaState", "BatchResult"]


class WriteStatus(enum.Enum):
    """Where a pending write is."""

    QUEUED = "queued"  # not sent on the current connection (new, or to send again)
    SENT = "sent"  # sent, no answer yet
    ACCEPTED = "accepted"  # accepted at `accepted_sequence`, not yet applied here


@dataclass
class PendingWrite:
    """A write the view shows on top of the confirmed values until it is settled."""

    write_id: int
    changes: tuple[Change, ...]
    status: WriteStatus = WriteStatus.QUEUED
    accepted_sequence: int = 0
    sent_epoch: int = 0  # the epoch of the host it was last sent to


@dataclass
class Outcome:
    """What an event did: shown values that changed, writes settled."""

    changed: dict[str, Any] = field(default_factory=dict)
    #: (write id, the sequence it was applied at, or the error that refused it)
    settled: list[tuple[int, int | StateBusError]] = field(default_factory=list)

    def merge(self, other: "Outcome") -> "Outcome":
        self.changed.update(other.changed)
        self.settled.extend(other.settled)
        return self


class BatchResult(enum.Enum):
    """How a list of batches went."""

    APPLIED = "applied"  # every batch applied or skipped as a duplicate
    GAP = "gap"  # a batch past the next sequence: resynchronise, keeping `remaining`
    NEW_EPOCH = "new_epoch"  # a batch of another epoch: join again
    UNREADABLE = "unreadable"  # a batch whose path does not lead into the value: resynchronise


class ReplicaState:
    """One object's confirmed state and the view's pending writes.

    Args:
        view_id: the view's id: batches whose origin it is are echoes of its writes.
    """

    def __init__(self, view_id: str) -> None:
        self.view_id = view_id
        self.epoch = 0
        self.sequence = 0
        self.confirmed: dict[str, Any] = {}
        self.versions: dict[str, int] = {}
        self.pending: list[PendingWrite] = []
        self.shown: dict[str, Any] = {}
        self.has_state = False

    # -- reads ---------------------------------------------------------------------------

    def pending_write(self, write_id: int) -> PendingWrite | None:
        """The pending write with that id, if any."""
        for w in self.pending:
            if w.write_id == write_id:
                return w
        return None

    def in_flight(self) -> int:
        """Writes sent and not yet answered."""
        return sum(1 for w in self.pending if w.status is WriteStatus.SENT)

    # -- events --------------------------------------------------------------------------

    def add_write(self, write_id: int, changes: Iterable[Change]) -> Outcome:
        """A new write: shown at once, on top of everything before it."""
        w = PendingWrite(write_id, tuple(changes))
        self.pending.append(w)
        return self._reshow({c.property for c in w.changes})

    def apply_snapshot(self, snapshot: Snapshot) -> Outcome:
        """A complete snapshot replaces the confirmed state. In a new epoch, writes the old
        host accepted are settled (they died with it, or the snapshot shows them); writes it
        never answered stay pending, to be sent again."""
        new_epoch = snapshot.epoch != self.epoch
        self.epoch, self.sequence = snapshot.epoch, snapshot.sequence
        self.confirmed, self.versions = dict(snapshot.values), dict(snapshot.versions)
        self.has_state = True
        outcome = Outcome()
        for w in list(self.pending):
            if w.status is WriteStatus.ACCEPTED and (new_epoch or w.accepted_sequence <= self.sequence):
                self.pending.remove(w)
                outcome.settled.append((w.write_id, w.accepted_sequence))
        return outcome.merge(self._reshow(set(self.confirmed) | set(self.shown)))

    def apply_batches(self, batches: list[Batch]) -> tuple[BatchResult, list[Batch], Outcome]:
        """Applies batches in order with the rules of section 6. Returns how it went, the
        batches not yet applied (from the gap or the bad batch on), and the outcome."""
        outcome = Outcome()
        touched: set[str] = set()
        for i, batch in enumerate(batches):
            if batch.epoch != self.epoch:
                return BatchResult.NEW_EPOCH, batches[i:], outcome.merge(self._reshow(touched))
            if batch.sequence <= self.sequence:
                continue
            if batch.sequence != self.sequence + 1:
                return BatchResult.GAP, batches[i:], outcome.merge(self._reshow(touched))
            values: dict[str, Any] = {}
            try:
                for c in batch.changes:
                    if not c.path and c.operation is Operation.REPLACE:  # a whole value: nothing to copy first
                        values[c.property] = copied(c.value)
                        continue
                    if c.property not in values:  # one copy per property and batch: all or nothing
                        values[c.property] = copy.deepcopy(self.confirmed.get(c.property))
                    values[c.property] = apply_change(values[c.property], c, in_place=True)
            except PathError:
                return BatchResult.UNREADABLE, batches[i:], outcome.merge(self._reshow(touched))
            self.confirmed.update(values)
            for name in values:
                self.versions[name] = batch.sequence
            self.sequence = batch.sequence
            touched |= set(values)
            for w in list(self.pending):
                echo = batch.origin == self.view_id and batch.write_id == w.write_id
                reached = w.status is WriteStatus.ACCEPTED and w.accepted_sequence <= self.sequence
                if echo or reached:
                    self.pending.remove(w)
                    touched |= {c.property for c in w.changes}
                    outcome.settled.append((w.write_id, batch.sequence if echo else w.accepted_sequence))
        return BatchResult.APPLIED, [], outcome.merge(self._reshow(touched))

    def accepted(self, write_id: int, sequence: int) -> Outcome:
        """The host accepted the write at ``sequence``: settled once that is applied here."""
        w = self.pending_write(write_id)
        if w is None:
            return Outcome()  # its echo came first
        if sequence <= self.sequence and w.sent_epoch == self.epoch:
            self.pending.remove(w)
            return Outcome(settled=[(write_id, sequence)]).merge(self._reshow({c.property for c in w.changes}))
        w.status, w.accepted_sequence = WriteStatus.ACCEPTED, sequence
        return Outcome()

    def refused(self, write_id: int, error: StateBusError) -> Outcome:
        """The host refused the write: it goes, and the shown value rolls back."""
        return self.drop(write_id, error)

    def drop(self, write_id: int, error: StateBusError) -> Outcome:
        """Removes a pending write (refused, timed out, closed), rolling its changes back."""
        w = self.pending_write(write_id)
        if w is None:
            return Outcome()
        self.pending.remove(w)
        return Outcome(settled=[(write_id, error)]).merge(self._reshow({c.property for c in w.changes}))

    def resend_unanswered(self) -> None:
        """After a new connection (or, confirming by echo, a resync): every write sent and
        not answered goes again, in order, before any newer one."""
        for w in self.pending:
            if w.status is WriteStatus.SENT:
                w.status = WriteStatus.QUEUED

    # -- shown values --------------------------------------------------------------------

    def _reshow(self, names: set[str]) -> Outcome:
        """Recomputes the shown value of each name: the confirmed value with the changes of
        every pending write re-applied in order (a change whose path no longer leads
        anywhere is skipped). Returns the names whose shown value changed."""
        outcome = Outcome()
        for name in names:
            value = self.confirmed.get(name)
            copied = False
            for w in self.pending:
                for c in w.changes:
                    if c.property == name:
                        if not copied:
                            value, copied = copy.deepcopy(value), True
                        try:
                            value = apply_change(value, c, in_place=True)
                        except PathError:
                            pass
            missing = object()
            if self.shown.get(name, missing) != value or type(self.shown.get(name, missing)) is not type(value):
                self.shown[name] = value
                outcome.changed[name] = value
        return outcome
