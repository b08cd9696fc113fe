"""Logging set-up for the program entry points: stderr only, text or JSON, secrets redacted.

Library modules only call ``logging.getLogger(__name__)``; handlers and levels are set here, once,
by each program's entry wrapper. The redacting filter runs on every record, ``--debug`` included,
so a bearer token or a client key in an exception text never reaches a terminal or a log file.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from typing import Any

_SECRET_PATTERNS = [
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+"),
    re.compile(
        r"(?i)((?:token|password|secret|client-key-data|client-certificate-data)[\"']?\s*[:=]\s*[\"']?)"
        r"[^\s\"',}]+"
    ),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
]
REDACTED = "<redacted>"

_STANDARD_ATTRS = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


def redact(text: str) -> str:
    """Replace anything that looks like a credential with a marker."""
    for pattern in _SECRET_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD_ATTRS and not k.startswith("_")}


class _RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        for key, value in _extras(record).items():
            if isinstance(value, str):
                setattr(record, key, redact(value))
        return True


class _TextFormatter(logging.Formatter):
    def __init__(self, program: str, debug: bool) -> None:
        super().__init__()
        self.program = program
        self.debug = debug

    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{k}={v}" for k, v in _extras(record).items())
        level = "" if record.levelno == logging.INFO else f"{record.levelname.lower()}: "
        line = f"[{self.program}] {level}{record.getMessage()}"
        if fields:
            line += f": {fields}"
        if self.debug and record.exc_info:
            line += "\n" + redact(self.formatException(record.exc_info))
        return line


class _JsonFormatter(logging.Formatter):
    def __init__(self, program: str) -> None:
        super().__init__()
        self.program = program

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname.lower(),
            "program": self.program,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        payload.update({k: v for k, v in _extras(record).items()})
        if record.exc_info:
            payload["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(payload, default=str)


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time of the record, not when it was set up, so a
    program run inside another (tests, an embedding tool) never logs to a stream already closed."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        return


def _quiet_urllib3(record: logging.LogRecord) -> bool:
    """Drop urllib3's warnings. It warns once per connection retry it makes below
    ``shared.kube.retry`` (the kubernetes client resets that logger's level whenever it builds a
    Configuration, so a level set here would not hold); the failure that outlasts every retry is
    reported once, as the program's error line. Shown with ``--debug``."""
    return not (record.name.startswith("urllib3") and record.levelno < logging.ERROR)


def configure(program: str, *, debug: bool, log_json: bool, quiet: bool = False) -> None:
    """Install the one stderr handler; safe to call again (tests run several programs)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_dsx_owned", False):
            root.removeHandler(handler)
    handler = _StderrHandler()
    handler._dsx_owned = True  # type: ignore[attr-defined]
    handler.addFilter(_RedactingFilter())
    if not debug:
        handler.addFilter(_quiet_urllib3)
    handler.setFormatter(_JsonFormatter(program) if log_json else _TextFormatter(program, debug))
    root.addHandler(handler)
    if debug:
        root.setLevel(logging.DEBUG)
    elif quiet:
        root.setLevel(logging.ERROR)
    else:
        root.setLevel(logging.WARNING)
    # Our own loggers speak at info; third-party libraries only at warning unless --debug.
    for name in ("shared", "aicr", "nvcre", "nvsentinel"):
        logging.getLogger(name).setLevel(logging.DEBUG if debug else (logging.ERROR if quiet else logging.INFO))
