"""The base class of every error caused by the user's input rather than by a bug.

``lm-eval-rul`` prints such errors as one clear message (what is wrong, where, and what
to do) and exits with status 2, without a traceback. Raise a subclass of
:class:`UserInputError` for bad data, files, arguments or settings; let programming
errors propagate as usual.
"""

from __future__ import annotations

__all__ = ["UserInputError"]


class UserInputError(Exception):
    """Bad input from the user: the message names the item, file or value and the fix."""
