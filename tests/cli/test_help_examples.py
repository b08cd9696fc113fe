"""The Examples section of the commands users run first, and that every example is a valid call.

Covers: the help of aicr recipe, bundle, validate, diff and completion, nvcrectl certification run
and report, nvsentinel run, rules check, events list and nodes shows an Examples section with at
least one example; every example line in every command's help (``PROG ...`` after
"Examples:") parses against that command's flags and arguments (an unknown flag, a missing
required option or a wrong command path fails), without running it.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import Any

import click
import pytest
import typer

from shared import cli_reference

FIRST = [
    "aicr recipe",
    "aicr bundle",
    "aicr validate",
    "aicr diff",
    "aicr completion",
    "nvcrectl certification run",
    "nvcrectl certification report",
    "nvsentinel run",
    "nvsentinel rules check",
    "nvsentinel events list",
    "nvsentinel nodes",
]


def _root(program: str) -> Any:
    return typer.main.get_command(cli_reference.load_app(program))


def _commands(program: str) -> Iterator[tuple[str, Any]]:
    stack = [(program, _root(program))]
    while stack:
        path, command = stack.pop()
        yield path, command
        for name, child in sorted(getattr(command, "commands", {}).items()):
            stack.append((f"{path} {name}", child))


def _help(program: str, path: str) -> str:
    root = _root(program)
    words = path.split()[1:]
    context = root.make_context(program, [*words, "--help"], resilient_parsing=True)
    command: Any = root
    for word in words:
        command = command.commands[word]
        context = click.Context(command, info_name=word, parent=context)
    return str(command.get_help(context))


def _examples(program: str, help_text: str) -> list[str]:
    """The example command lines of a help text (comments and shell wrapping left out)."""
    if "Examples:" not in help_text:
        return []
    section = help_text.split("Examples:", 1)[1]
    found = []
    for line in section.splitlines():
        text = line.strip()
        if text.startswith(f"{program} "):
            found.append(text.split(" > ")[0])
        elif f"$({program} " in text:
            found.append(text.split("$(", 1)[1].split(")", 1)[0])
    return found


@pytest.mark.parametrize("path", FIRST)
def test_the_commands_users_run_first_show_examples(path: str) -> None:
    program = path.split()[0]
    examples = _examples(program, _help(program, path))
    assert examples, f"{path} --help has no Examples section"
    assert all(e.startswith(path) for e in examples), examples


def _parse(program: str, argv: list[str]) -> None:
    """Parse ``argv`` down to its leaf command as click would, without invoking anything."""
    command: Any = _root(program)
    context = None
    name = program
    while True:
        children = getattr(command, "commands", None) or {}
        if argv and argv[0] in children:  # the command path comes before any option
            context = click.Context(command, info_name=name, parent=context)
            name, command, argv = argv[0], children[argv[0]], argv[1:]
            continue
        command.make_context(name, argv, parent=context)
        return


@pytest.mark.parametrize("program", ["aicr", "nvcrectl", "nvsentinel"])
def test_every_example_parses_against_its_commands_flags(program: str) -> None:
    checked = 0
    for path, _command in _commands(program):
        for example in _examples(program, _help(program, path)):
            argv = shlex.split(example)[1:]
            try:
                _parse(program, argv)
            except click.UsageError as exc:
                pytest.fail(f"{path}: example {example!r} does not parse: {exc.format_message()}")
            checked += 1
    assert checked >= 5
