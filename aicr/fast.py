"""``aicr recipe`` and ``aicr query`` answered from the recipe memo before the command line framework is imported.

A recipe (and a queried value) is memoised by its inputs (``shared.recipe.memo``); on a hit the
whole command is a hash and a file write, yet importing typer and click costs more than the rest
of the run. So the console script first tries this narrow path: it recognises only a plain
``recipe`` request (criteria flags, ``-o`` to a file or stdout, ``-t``) or ``query`` request
(criteria flags, ``--selector``, ``-t``), in the spellings the full command accepts,
computes the memo key with the command's own function, and on a hit writes what the full command
would write. On a miss it resolves with the command's own service function (the compiled catalog
and the resolver: no typer, and no pydantic once the catalog is compiled) and writes that, when
the resolution neither warned nor failed.
Anything else (another command, another flag, a repeated flag, a value that looks like a flag, a
ConfigMap destination, the debug or completion variables, a warning or an error while resolving,
a destination that cannot be written) returns None and the full program runs, which then reports
exactly what it always did. A hit needs the standard library and ``shared.recipe.memo`` only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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
QUERY = "query"
QUERY_FLAGS = {**{k: v for k, v in FLAGS.items() if v != "output"}, "--selector": "selector"}
"""The flags of ``aicr query`` this path takes; see aicr/query.py."""
FORMATS = ("yaml", "json", "table")
QUERY_FORMATS = ("yaml", "json")
ENVIRONMENT = ("AICR_DEBUG", "AICR_LOG_JSON", "_AICR_COMPLETE")
"""Variables that change what the full program does (logging, completion): set, it runs."""


def parse(argv: Sequence[str], *, command: str = COMMAND) -> dict[str, str] | None:
    """The parameters of a plain ``recipe`` (or ``query``) request, or None when this path does not take it."""
    if not argv or argv[0] != command:
        return None
    given = options(argv[1:], QUERY_FLAGS if command == QUERY else FLAGS)
    return None if given is None else {k: str(v) for k, v in given.items()}


def options(
    argv: Sequence[str], flags: dict[str, str], switches: dict[str, str] | None = None
) -> dict[str, str | bool] | None:
    """Each of ``flags`` (name -> parameter) at most once with a value that is not a flag (``-``,
    stdin or stdout, is a value), each of ``switches`` at most once with none (True); None at the
    first token that is neither, which the full program then judges (also ``aicr.fast_bundle``)."""
    switches = switches or {}
    given: dict[str, str | bool] = {}
    tokens = list(argv)
    while tokens:
        token = tokens.pop(0)
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        param = switches.get(token) or flags.get(name)
        if param is None or param in given:
            return None  # not ours, or repeated (the full command refuses a repeated flag)
        if token in switches:
            given[param] = True
            continue
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
    if argv and argv[0] == QUERY:
        return _query(argv)
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
        text = _resolved(lambda service: service.recipe_text(fmt=_format(fmt), **criteria)[0])
    if text is None:
        return None
    return _write_stdout(text) if output == "-" else _write_file(Path(output), text)


def _format(name: str) -> Any:
    from shared.output import Format

    return Format(name)


def _resolved(work: Callable[[Any], str]) -> str | None:
    """On a memo miss, the answer worked out here (``work`` given ``shared.recipe.service``),
    without the command line framework: only when it resolves cleanly. A warning or an error
    returns None, and the full program works it out again and reports it as it always does (the
    warning is counted, never printed here; a run that warned is not memoised)."""
    try:
        from shared.recipe import memo, service

        with memo.counting_warnings() as warnings:
            text = work(service)
    except Exception:
        return None
    return text if warnings.count == 0 else None


def _query(argv: Sequence[str]) -> int | None:
    """A memoised ``aicr query``: its value printed as the full command prints it."""
    if any(variable in os.environ for variable in ENVIRONMENT):
        return None
    given = parse(argv, command=QUERY)
    if given is None or "selector" not in given:
        return None  # the full command asks for the missing --selector
    selector = given.pop("selector")
    fmt = given.pop("fmt", "yaml").lower()
    if fmt not in QUERY_FORMATS:
        return None
    try:
        from shared.recipe import memo

        text = memo.lookup(memo.query_key(given, selector, fmt))
    except Exception:  # whatever went wrong, the full program meets it again and reports it
        return None
    if text is None:
        text = _resolved(lambda service: service.query_text(selector=selector, fmt=_format(fmt), **given))
    return None if text is None else _write_stdout(text)


def _request(argv: Sequence[str]) -> tuple[dict[str, str], str, str] | None:
    """(criteria, format, destination) of a request this path answers, or None."""
    if any(variable in os.environ for variable in ENVIRONMENT):
        return None
    given = parse(argv)
    if given is None:
        return None
    fmt = given.pop("fmt", "yaml").lower()
    output = given.pop("output", "-")
    if fmt not in FORMATS or "://" in output:  # a ConfigMap, a URL or oci://: the full program says what it does
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
