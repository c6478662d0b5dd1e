"""StateBus for Python: a live replica of a StateBus host's model object (in progress)."""

from .errors import *  # noqa: F403 - the error classes are part of the API
from .errors import __all__ as _errors
from .values import Change, Id, Operation

__version__ = "0.1.0"
__all__ = ["Change", "Id", "Operation", *_errors]
