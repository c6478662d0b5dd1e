"""The control endpoints a view may reach its host at, and which one it uses now.

A high-availability group (``statebus host --ha``) has several hosts, one of which leads;
the others are standbys that refuse a hello or a snapshot request with ``NOT_LEADER``, naming
the leader's control endpoint when they know it. A view given them all
(``"tcp://a:7000,tcp://b:7000"``, or a list) says hello to one at a time: to the leader a
standby named, else to the next in the list (PROTOCOL.md, "Standby hosts"). After a write
refused ``PERSISTENCE_FAILED`` the view asks the :meth:`~ControlEndpoints.others` whether one
leads, and uses the one that welcomes it (:meth:`~ControlEndpoints.use`; the search is in
``_leader.py``). One endpoint behaves as before. The same rule as the Swift replica's
``ControlEndpoints``.
"""

from __future__ import annotations

from typing import Sequence, Union

#: What ``statebus.connect`` takes as ``control``: one endpoint, several separated by commas,
#: or a sequence of endpoints.
ControlArgument = Union[str, Sequence[str]]

#: Refusals in a row without a leader to follow before the next listed endpoint is tried.
REFUSALS_BEFORE_NEXT = 4
#: The first pause before asking a standby again; it doubles with each refusal in a row.
FIRST_PAUSE = 0.025
#: The longest pause before asking a standby again.
LONGEST_PAUSE = 0.2


class ControlEndpoints:
    """The listed endpoints, the one in use, and the standby rule's memory.

    Attributes:
        listed: the endpoints as given, in order.
        current: the endpoint in use: one of ``listed``, or a leader a standby named.
        refusals: standby refusals (``NOT_LEADER``) in a row since the last welcome.
    """

    def __init__(self, listed: Sequence[str]) -> None:
        self.listed: tuple[str, ...] = tuple(listed)
        self.current = self.listed[0]
        self.refusals = 0
        self._position = 0
        # An endpoint left because it fell silent, and until when (time.monotonic()) a
        # standby naming it as the leader is not believed: etcd keeps a dead leader's key
        # until its lease ends, and a standby repeats what etcd says.
        self._suspect: tuple[str, float] | None = None

    @classmethod
    def parse(cls, control: ControlArgument) -> "ControlEndpoints":
        """Reads ``"tcp://a:7000"``, ``"tcp://a:7000,tcp://b:7000"`` or
        ``["tcp://a:7000", "tcp://b:7000"]`` (spaces around each entry are ignored).

        Raises:
            ValueError: no endpoint, an empty entry, or an entry that is not an endpoint.
        """
        if isinstance(control, str):
            entries = [entry.strip() for entry in control.split(",")]
        elif isinstance(control, Sequence) and all(isinstance(entry, str) for entry in control):
            entries = [entry.strip() for entry in control]
        else:
            raise ValueError(f"control is an endpoint, several separated by commas, or a list of endpoints; got {control!r}")
        if not entries or any("://" not in entry or "," in entry for entry in entries):
            raise ValueError(
                "control must be an endpoint such as ipc:///run/user/1000/statebus/statebus.control, or several "
                f"(the hosts of a high-availability group) such as tcp://10.0.0.1:7000,tcp://10.0.0.2:7000; got {control!r}")
        return cls(entries)

    @property
    def has_alternatives(self) -> bool:
        """Whether there is more than one endpoint to try."""
        return len(self.listed) > 1

    def describe(self) -> str:
        """The listed endpoints, for messages."""
        return ", ".join(self.listed)

    def advance(self) -> None:
        """Moves on to the next listed endpoint (after the last, the first again)."""
        self._position = (self._position + 1) % len(self.listed)
        self.current = self.listed[self._position]

    def leave_silent(self, now: float, suspect_for: float) -> None:
        """Leaves the endpoint in use because it fell silent (missed heartbeats, no welcome
        in time): the next listed one is tried, and for ``suspect_for`` seconds a standby
        naming the silent one as the leader is not followed there. With one endpoint, stays."""
        if not self.has_alternatives:
            return
        self._suspect = (self.current, now + suspect_for)
        self.advance()

    def follow(self, leader: str, now: float) -> bool:
        """Counts a standby's refusal and uses the leader it named.

        Returns:
            whether to say hello to :attr:`current` at once: the leader named, listed or
            not. ``False`` when the standby named none (an election is under way) or one
            that fell silent a moment ago: the view then asks :attr:`current` again after
            :meth:`pause`, which after every 4th refusal in a row is the next listed
            endpoint.
        """
        self.refusals += 1
        suspected = self._suspect is not None and self._suspect[0] == leader and now < self._suspect[1]
        if not leader or suspected:
            if self.refusals % REFUSALS_BEFORE_NEXT == 0:
                self._advance_to_unsuspected(now)
            return False
        if leader in self.listed:
            self._position = self.listed.index(leader)
        self.current = leader
        return True

    def _is_suspect(self, endpoint: str, now: float) -> bool:
        return self._suspect is not None and self._suspect[0] == endpoint and now < self._suspect[1]

    def _advance_to_unsuspected(self, now: float) -> None:
        """Moves on to the next listed endpoint that did not fall silent a moment ago; stays
        when every other one did."""
        start = (self.current, self._position)
        for _ in range(len(self.listed)):
            self.advance()
            if not self._is_suspect(self.current, now):
                return
        self.current, self._position = start

    def others(self) -> tuple[str, ...]:
        """The listed endpoints other than the one in use, in order: where to look for the
        leader while the host in use takes no writes (``PERSISTENCE_FAILED``)."""
        return tuple(endpoint for endpoint in self.listed if endpoint != self.current)

    def use(self, leader: str) -> None:
        """Uses ``leader``, an endpoint that welcomed a hello (it leads), from now on; the
        standby refusals in a row start again from 0 (listed or not, as :meth:`follow`)."""
        if leader in self.listed:
            self._position = self.listed.index(leader)
        self.current = leader
        self.refusals = 0

    def pause(self) -> float:
        """Seconds to wait before asking again after :attr:`refusals` refusals in a row:
        25 ms, doubling, at most 200 ms (an election takes about a lease)."""
        return min(FIRST_PAUSE * (1 << min(max(self.refusals - 1, 0), 3)), LONGEST_PAUSE)

    def welcomed(self) -> None:
        """The endpoint in use welcomed the view: it leads; the refusals in a row and the
        suspicion end."""
        self.refusals = 0
        self._suspect = None

    def __repr__(self) -> str:
        return f"<ControlEndpoints {self.current} of {self.describe()}>"
