"""The errors a StateBus view raises.

Every error code of PROTOCOL.md section 10 is a subclass of :class:`StateBusError`, named
after the code (``ERROR_CODE_READ_ONLY`` is :class:`ReadOnlyError`), carrying the host's
``message`` and, when the host named them, the ``object`` and ``property``. The client raises
the same classes itself when it can tell before sending (an unknown or read-only property, a
value of the wrong kind, a write larger than the host takes), so an application catches one
class whoever found the fault.

Errors of the client's own: :class:`StateBusTimeoutError` (also a :class:`TimeoutError`),
:class:`ClosedError` (the view was closed with the operation unfinished).
"""

from __future__ import annotations

from typing import ClassVar

from ._wire import pb

__all__ = [
    "StateBusError",
    "UnspecifiedError",
    "BadRequestError",
    "UnsupportedVersionError",
    "UnknownObjectError",
    "UnknownPropertyError",
    "ReadOnlyError",
    "TypeMismatchError",
    "InvalidPathError",
    "ValidationFailedError",
    "VersionConflictError",
    "TooLargeError",
    "PersistenceFailedError",
    "NotJoinedError",
    "ViewIdInUseError",
    "ForbiddenError",
    "UnknownActionError",
    "ActionFailedError",
    "OverloadedError",
    "InterruptedCallError",
    "NotLeaderError",
    "StateBusTimeoutError",
    "ClosedError",
    "error_from_wire",
]


class StateBusError(Exception):
    """Something StateBus refused or could not do.

    Attributes:
        code: the protocol's error code (``statebus.v1.ErrorCode``, an ``int``); 0 for the
            client's own errors that have no code.
        message: what was wrong, where, and what to do: the host's words when the host
            refused.
        object: the object concerned, when known ("" otherwise).
        property: the property concerned, when known ("" otherwise).
    """

    code: ClassVar[int] = pb.ERROR_CODE_UNSPECIFIED

    def __init__(self, message: str, *, object: str = "", property: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.object = object
        self.property = property

    @property
    def code_name(self) -> str:
        """The code's name in the protocol, such as ``"READ_ONLY"``."""
        return pb.ErrorCode.Name(self.code).removeprefix("ERROR_CODE_")

    def __str__(self) -> str:
        where = ".".join(part for part in (self.object, self.property) if part)
        # The client's own errors (timeouts, closed) have no code to show.
        facts = [self.code_name] if self.code or isinstance(self, UnspecifiedError) else []
        facts += [where] if where else []
        return f"{self.message} ({', '.join(facts)})" if facts else self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, object={self.object!r}, property={self.property!r})"


class UnspecifiedError(StateBusError):
    """A code this client does not know (a newer host), or ``UNSPECIFIED``."""

    code = pb.ERROR_CODE_UNSPECIFIED

    def __init__(self, message: str, *, object: str = "", property: str = "", wire_code: int = 0) -> None:
        super().__init__(message, object=object, property=property)
        self.wire_code = wire_code


class BadRequestError(StateBusError):
    """The host could not read the request, or a write had unknown fields or no changes."""

    code = pb.ERROR_CODE_BAD_REQUEST


class UnsupportedVersionError(StateBusError):
    """The host does not speak the protocol version the client used."""

    code = pb.ERROR_CODE_UNSUPPORTED_VERSION


class UnknownObjectError(StateBusError):
    """The host serves no object of that name."""

    code = pb.ERROR_CODE_UNKNOWN_OBJECT


class UnknownPropertyError(StateBusError, AttributeError):
    """The object has no property of that name (also an :class:`AttributeError`)."""

    code = pb.ERROR_CODE_UNKNOWN_PROPERTY


class ReadOnlyError(StateBusError):
    """The property is the host's alone: views may read it, not write it."""

    code = pb.ERROR_CODE_READ_ONLY


class TypeMismatchError(StateBusError, TypeError):
    """The value does not decode as the property's type (also a :class:`TypeError`)."""

    code = pb.ERROR_CODE_TYPE_MISMATCH


class InvalidPathError(StateBusError):
    """The path does not lead into the value, or the element is not (or no longer) there."""

    code = pb.ERROR_CODE_INVALID_PATH


class ValidationFailedError(StateBusError, ValueError):
    """The model's validator refused the value; ``message`` is its reason."""

    code = pb.ERROR_CODE_VALIDATION_FAILED


class VersionConflictError(StateBusError):
    """Compare-and-set: the property's version has moved on. Read again, then retry."""

    code = pb.ERROR_CODE_VERSION_CONFLICT


class TooLargeError(StateBusError, ValueError):
    """The request (or the property it would make) is larger than the host takes."""

    code = pb.ERROR_CODE_TOO_LARGE


class PersistenceFailedError(StateBusError):
    """The host could not make the write durable; it did not last."""

    code = pb.ERROR_CODE_PERSISTENCE_FAILED


class NotJoinedError(StateBusError):
    """The connection never said hello to this host. The view handles it by itself (it
    reconnects and sends the write again); an application sees it only from a call."""

    code = pb.ERROR_CODE_NOT_JOINED


class ViewIdInUseError(StateBusError):
    """Another live connection holds this view id."""

    code = pb.ERROR_CODE_VIEW_ID_IN_USE


class ForbiddenError(StateBusError, PermissionError):
    """The client's CURVE key may not do this (its role in the host's authorized keys)."""

    code = pb.ERROR_CODE_FORBIDDEN


class UnknownActionError(StateBusError):
    """No action of that name, or the wrong number of arguments."""

    code = pb.ERROR_CODE_UNKNOWN_ACTION


class ActionFailedError(StateBusError):
    """The action ran on the host and threw; ``message`` is its error. Changes it made
    before throwing stay applied."""

    code = pb.ERROR_CODE_ACTION_FAILED


class OverloadedError(StateBusError):
    """Too many calls are running on the host; the action did not run. Try again later."""

    code = pb.ERROR_CODE_OVERLOADED


class InterruptedCallError(StateBusError):
    """The connection was replaced while a call was in flight: it may or may not have run.
    Read the state before calling again. (Code ``INTERRUPTED``; not named ``InterruptedError``,
    which is Python's own.)"""

    code = pb.ERROR_CODE_INTERRUPTED


class NotLeaderError(StateBusError):
    """The host is a standby of a high-availability group (``statebus host --ha``), or a
    leader that lost its lease: another host leads and takes the writes.

    A view handles it by itself (PROTOCOL.md, "Standby hosts"): it says hello to the leader
    the host named, else asks again and tries its other control endpoints; a write or call
    so refused was not applied and is sent again. An application sees it as the view's
    ``last_error`` while no leader is found, and in a :class:`StateBusTimeoutError`'s
    message.

    Attributes:
        leader_control: the leader's control endpoint, as the host named it ("" when it
            knows none: an election is under way).
    """

    code = pb.ERROR_CODE_NOT_LEADER

    def __init__(self, message: str, *, object: str = "", property: str = "", leader_control: str = "") -> None:
        super().__init__(message, object=object, property=property)
        self.leader_control = leader_control


class StateBusTimeoutError(StateBusError, TimeoutError):
    """A wait ran past its deadline: a join, a write without an answer (rolled back; its
    outcome is unknown), or a call."""


class ClosedError(StateBusError):
    """The view was closed before the operation finished."""


_BY_CODE: dict[int, type[StateBusError]] = {
    cls.code: cls
    for cls in (
        BadRequestError,
        UnsupportedVersionError,
        UnknownObjectError,
        UnknownPropertyError,
        ReadOnlyError,
        TypeMismatchError,
        InvalidPathError,
        ValidationFailedError,
        VersionConflictError,
        TooLargeError,
        PersistenceFailedError,
        NotJoinedError,
        ViewIdInUseError,
        ForbiddenError,
        UnknownActionError,
        ActionFailedError,
        OverloadedError,
        InterruptedCallError,
        NotLeaderError,
    )
}


def error_from_wire(error: "pb.Error") -> StateBusError:
    """The exception for a host's ``Error`` message: the class of its code, with its words."""
    cls = _BY_CODE.get(error.code)
    if cls is None:
        return UnspecifiedError(
            error.message or f"error code {error.code}", object=error.object, property=error.property, wire_code=error.code
        )
    if cls is NotLeaderError:
        return NotLeaderError(error.message, object=error.object, property=error.property, leader_control=error.leader_control)
    return cls(error.message, object=error.object, property=error.property)
