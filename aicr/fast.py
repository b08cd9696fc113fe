"""``aicr recipe`` answered from the recipe memo before the command line framework is imported.

A recipe is memoised by its inputs (``shared.recipe.memo``); on a hit the whole command is a hash
and a file write, yet importing typer and click costs more than the rest of the run. So the
console script first tries this narrow path: it recognises only a plain ``recipe`` request
(criteria flags, ``-o`` to a file or stdout, ``-t``), in the spellings the full command accepts,
computes the memo key with the command's own function, and on a hit writes what the full command
would write. Anything else (another command, another flag, a repeated flag, a value that looks
like a flag, a ConfigMap destination, the debug or completion variables, a miss, a destination
that cannot be written) returns None and the full program runs, which then reports exactly what
it always did. Standard library and ``shared.recipe.memo`` only, on purpose.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

COMMAND = "recipe"
FLAGS = {
    "--service": "service",
    "--accelerator": "accelerator",
    "--gpu": "accelerator",
    "--intent": "intent",
    "--os": "os",
    "--platform": "platform",
    "--output": "output",
    "-o": "output",
    "--format": "fmt",
    "-t": "fmt",
}
"""The flags of ``aicr recipe`` this path takes (name -> parameter); see aicr/recipe.py."""
FORMATS = ("yaml", "json", "table")
ENVIRONMENT = ("AICR_DEBUG", "AICR_LOG_JSON", "_AICR_COMPLETE")
"""Variables that change what the full program does (logging, completion): set, it runs."""
_REMOTE = ("cm://", "http://", "https://")


def parse(argv: Sequence[str]) -> dict[str, str] | None:
    """The parameters of a plain ``recipe`` request, or None when this path does not take it."""
    if not argv or argv[0] != COMMAND:
        return None
    given: dict[str, str] = {}
    tokens = list(argv[1:])
    while tokens:
        token = tokens.pop(0)
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        param = FLAGS.get(name)
        if param is None or param in given:
            return None  # not ours, or repeated (the full command refuses a repeated flag)
        if not equals:
            if not tokens:
                return None
            value = tokens.pop(0)
        if not value or (value.startswith("-") and value != "-"):
            return None
        given[param] = value
    return given


def recipe(argv: Sequence[str]) -> int | None:
    """The exit status of ``aicr ARGV`` answered from the memo, or None to run the full program."""
    try:
        return _recipe(argv)
    except KeyboardInterrupt:  # as the full program reports Ctrl-C (shared.cli.INTERRUPTED)
        sys.stderr.write("error: interrupted\n")
        return 130


def _recipe(argv: Sequence[str]) -> int | None:
    request = _request(argv)
    if request is None:
        return None
    criteria, fmt, output = request
    try:
        from shared.recipe import memo

        text = memo.lookup(memo.request_key(criteria, fmt))
    except Exception:  # whatever went wrong, the full program meets it again and reports it
        return None
    if text is None:
        return None
    return _write_stdout(text) if output == "-" else _write_file(Path(output), text)


def _request(argv: Sequence[str]) -> tuple[dict[str, str], str, str] | None:
    """(criteria, format, destination) of a request this path answers, or None."""
    if any(variable in os.environ for variable in ENVIRONMENT):
        return None
    given = parse(argv)
    if given is None:
        return None
    fmt = given.pop("fmt", "yaml").lower()
    output = given.pop("output", "-")
    if fmt not in FORMATS or output.lower().startswith(_REMOTE):
        return None
    return given, fmt, output


def _write_file(path: Path, text: str) -> int | None:
    """As ``shared.recipe.service.write`` writes a file: checked, then atomically."""
    from shared import files

    try:
        files.check_output(path, probe=True)
        files.atomic_write_text(path, text)
    except Exception:  # nothing was written (atomic): the full program reports the error
        return None
    return 0


def _write_stdout(text: str) -> int:
    """As the full command prints: once bytes are out, the full program's handling of a failed
    stdout (a closed pipe is success, a full disk exit 9), not a second attempt."""
    from shared import output

    try:
        output.write_stdout(text)
        sys.stdout.flush()
    except OSError as exc:
        from shared import cli

        return cli.os_error_status(exc, debug=False)
    return 0
