"""Every error code of PROTOCOL.md section 10 has its exception class."""

import pytest

import statebus
from statebus._wire import pb
from statebus.errors import error_from_wire


@pytest.mark.parametrize("code", [c for c in pb.ErrorCode.values() if c != pb.ERROR_CODE_UNSPECIFIED])
def test_each_code_has_a_class_with_the_hosts_words(code: int) -> None:
    error = error_from_wire(pb.Error(code=code, message="what went wrong", object="Profile", property="user"))
    assert type(error) is not statebus.UnspecifiedError
    assert isinstance(error, statebus.StateBusError)
    assert error.code == code
    assert (error.message, error.object, error.property) == ("what went wrong", "Profile", "user")
    assert "what went wrong" in str(error) and "Profile.user" in str(error)
    expected = pb.ErrorCode.Name(code).removeprefix("ERROR_CODE_")
    assert error.code_name == expected
    # The class is exported under the code's name (INTERRUPTED is InterruptedCallError).
    name = "InterruptedCallError" if expected == "INTERRUPTED" else "".join(w.title() for w in expected.split("_")) + "Error"
    assert getattr(statebus, name) is type(error)


def test_an_unknown_code_is_kept() -> None:
    error = error_from_wire(pb.Error(code=99, message="newer host"))
    assert isinstance(error, statebus.UnspecifiedError) and error.wire_code == 99


def test_builtin_categories() -> None:
    assert issubclass(statebus.StateBusTimeoutError, TimeoutError)
    assert issubclass(statebus.TypeMismatchError, TypeError)
    assert issubclass(statebus.ValidationFailedError, ValueError)
    assert issubclass(statebus.ForbiddenError, PermissionError)
    assert issubclass(statebus.UnknownPropertyError, AttributeError)


def test_the_clients_own_errors_show_no_code() -> None:
    assert str(statebus.ClosedError("the view was closed", object="Profile")) == "the view was closed (Profile)"
    assert str(statebus.StateBusTimeoutError("too slow")) == "too slow"
