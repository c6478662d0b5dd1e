"""StateBus for Python: a live replica of a StateBus host's model object (in progress)."""

from .errors import *  # noqa: F403 - the error classes are part of the API
from .errors import __all__

__version__ = "0.1.0"
