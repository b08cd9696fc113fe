"""One error hierarchy for all three programs, and the only table from error to exit status.

A verdict (drift found, certification failed) is not an error: it is a result whose ``passed``
flag the program turns into exit 1. Errors are for input that cannot be used, things that are
missing, and a cluster that refuses or does not answer.
"""

from __future__ import annotations

from typing import Any, ClassVar

EXIT_OK = 0
EXIT_VERDICT_FAILED = 1


class ToolError(Exception):
    """Base of every error a user may see: one line, with where it happened."""

    exit_code: ClassVar[int] = 8
    kind: ClassVar[str] = "internal error"

    def __init__(self, message: str, *, where: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where

    def line(self) -> str:
        """The single stderr line: ``error: WHERE: MESSAGE``."""
        if self.where:
            return f"error: {self.where}: {self.message}"
        return f"error: {self.message}"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class InvalidInput(ToolError):
    """Input that cannot be used as given: a bad flag, file, field or rule."""

    exit_code = 2
    kind = "invalid input"


class NotFound(ToolError):
    """A named thing (file, object, selector path) does not exist."""

    exit_code = 3
    kind = "not found"


class Unauthorized(ToolError):
    """The cluster refused the credentials or the permission."""

    exit_code = 4
    kind = "unauthorized"


class Timeout(ToolError):
    """A wait ran out before the expected state appeared."""

    exit_code = 5
    kind = "timeout"


class Unavailable(ToolError):
    """The cluster or a service could not be reached."""

    exit_code = 6
    kind = "unavailable"


class DiskFull(ToolError):
    """A write ran out of room (ENOSPC, EDQUOT, or EFBIG from a file-size limit): not a verdict.

    Its own status so a CI gate never reads a full disk as drift or a failed check (exit 1); not 7,
    which upstream AICR gives to rate limiting."""

    exit_code = 9
    kind = "disk full"


class Internal(ToolError):
    """A bug: something the program should have prevented."""

    exit_code = 8
    kind = "internal error"


def exit_code_for(error: BaseException) -> int:
    """The exit status for any exception; unknown exceptions are internal errors."""
    if isinstance(error, ToolError):
        return error.exit_code
    return Internal.exit_code


def from_validation(error: Any, *, where: str) -> InvalidInput:
    """One line for the first problem of a pydantic ``ValidationError``: ``where field.path: message``.

    Duck-typed (``error.errors()``) so this base module does not import pydantic.
    """
    first = error.errors()[0]
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.get("loc", ())).lstrip(".")
    return InvalidInput(str(first.get("msg", "invalid value")), where=f"{where} {path}" if path else where)
