"""The command reference in docs/reference/, generated from the programs' own command trees.

Hand-written option tables drift from the code the day a flag is added; this module walks the click
tree typer builds from each program's ``build_app()`` and writes one Markdown page per program:
every command with its usage line, help text, arguments and options (value, default, environment
variable). ``python -m shared.cli_reference docs/reference`` (``make reference``) rewrites the pages;
``tests/test_cli_reference.py`` fails while the committed pages differ from a fresh rendering.

The output depends only on the command definitions: click's help formatter (which wraps to the
terminal width) is not used, and defaults are printed as declared, never as computed from the
environment. The programs are named here as import strings and loaded at run time, because the
library never imports a program; this documentation tool is the one place that needs all three.
Click objects are duck-typed, as in ``shared/cli.py``.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# program -> "module:factory" of its typer app (the console scripts of pyproject.toml).
PROGRAMS: dict[str, str] = {
    "aicr": "aicr.main:build_app",
    "nvcrectl": "nvcre.main:build_app",
    "nvsentinel": "nvsentinel.main:build_app",
}
REGENERATE = "make reference"


def load_app(program: str) -> Any:
    """The typer app of ``program`` (KeyError for a program not in ``PROGRAMS``)."""
    module, _, factory = PROGRAMS[program].partition(":")
    build: Callable[[], Any] = getattr(importlib.import_module(module), factory)
    return build()


def _click_command(app: Any) -> Any:
    import typer

    return typer.main.get_command(app)


def _children(command: Any, ctx: Any) -> Iterator[tuple[str, Any]]:
    """Visible sub-commands in the order the program registered them."""
    for name in command.list_commands(ctx) if hasattr(command, "list_commands") else []:
        child = command.get_command(ctx, name)
        if child is not None and not getattr(child, "hidden", False):
            yield name, child


def _context(command: Any, name: str, parent: Any) -> Any:
    """A context as click would build it for ``command`` (its own context class and settings).

    The command's ``context_class`` rather than ``click.Context``: whichever click typer brings.
    """
    return command.context_class(command, info_name=name, parent=parent, **(command.context_settings or {}))


def _help_text(command: Any) -> str:
    """The command's help as paragraphs; click's ``\\b`` no-rewrap markers dropped."""
    text = inspect.cleandoc(command.help or "")
    return "\n".join(line for line in text.splitlines() if line.strip() != "\b").strip()


def _first_sentence(command: Any) -> str:
    text = " ".join((command.short_help or _help_text(command)).split())
    return text.split(". ")[0].rstrip(".") if text else ""


def _cell(text: str) -> str:
    """One Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _default(param: Any) -> str:
    """The declared default as a user would type it; empty when there is none worth showing."""
    if isinstance(param.show_default, str):
        return param.show_default
    value = param.default
    if callable(value) or value is None:
        return ""
    if getattr(param, "is_flag", False):
        return _flag_default(param, value)
    return _typed(value)


def _flag_default(param: Any, value: Any) -> str:
    """The spelling in force for an on/off pair; "on" for a plain flag that is set, else nothing."""
    if param.secondary_opts:
        return str(param.opts[0] if value else param.secondary_opts[0])
    return "" if value is False else "on"


def _typed(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()
    if hasattr(value, "value") and not isinstance(value, (str, int, float)):  # an enum member
        value = value.value
    return str(value)


def _value(param: Any, ctx: Any) -> str:
    if getattr(param, "is_flag", False):
        return ""
    return str(param.make_metavar(ctx))


def _names(param: Any) -> str:
    names = sorted(param.opts, key=lambda n: (n.startswith("--"), n))
    text = ", ".join(f"`{n}`" for n in names)
    if param.secondary_opts:
        text += " / " + ", ".join(f"`{n}`" for n in param.secondary_opts)
    return text


def _notes(param: Any) -> list[str]:
    """Facts the declaration knows and the help text may not say (once: not if it says so already)."""
    notes = []
    said = (getattr(param, "help", None) or "").lower()
    if param.required:
        notes.append("required")
    if getattr(param, "multiple", False) and "repeatable" not in said:
        notes.append("repeatable")
    envvar = param.envvar
    if envvar:
        names = [envvar] if isinstance(envvar, str) else list(envvar)
        notes.append("env " + ", ".join(f"`{n}`" for n in names))
    return notes


def _is_help(param: Any, command: Any, ctx: Any) -> bool:
    """click's own ``-h/--help``: every command has it, so the page says so once."""
    return param is command.get_help_option(ctx)


def _options_table(command: Any, ctx: Any) -> list[str]:
    rows = []
    for param in command.get_params(ctx):
        if param.param_type_name != "option" or getattr(param, "hidden", False) or _is_help(param, command, ctx):
            continue
        default = _default(param)
        value = _value(param, ctx)
        help_text = " ".join([getattr(param, "help", None) or "", *(f"({n})" for n in _notes(param))])
        rows.append(
            f"| {_names(param)} | {_cell(value)} | {_cell(f'`{default}`' if default else '')} | {_cell(help_text)} |"
        )
    if not rows:
        return []
    return ["| option | value | default | description |", "|---|---|---|---|", *rows, ""]


def _arguments_table(command: Any, ctx: Any) -> list[str]:
    rows = []
    for param in command.get_params(ctx):
        if param.param_type_name != "argument":
            continue
        help_text = getattr(param, "help", None) or ""
        notes = ["required" if param.required else "optional"]
        if param.nargs == -1:
            notes.append("any number")
        default = _default(param)
        if default:
            notes.append(f"default `{default}`")
        rows.append(f"| `{param.make_metavar(ctx)}` | {_cell(' '.join([help_text, '(' + ', '.join(notes) + ')']))} |")
    if not rows:
        return []
    return ["| argument | description |", "|---|---|", *rows, ""]


def _anchor(path: str) -> str:
    """GitHub's heading anchor for ``## `PATH` `` (lower case, spaces to dashes)."""
    return re.sub(r"[^a-z0-9 _-]", "", path.lower()).replace(" ", "-")


def _section(command: Any, ctx: Any, path: str) -> list[str]:
    lines = [f"## `{path}`", ""]
    help_text = _help_text(command)
    if help_text:
        lines += [help_text, ""]
    pieces = " ".join(command.collect_usage_pieces(ctx))
    lines += ["```", f"{path} {pieces}".rstrip(), "```", ""]
    lines += _arguments_table(command, ctx)
    lines += _options_table(command, ctx)
    children = list(_children(command, ctx))
    if children:
        lines += ["| command | what it does |", "|---|---|"]
        lines += [
            f"| [`{path} {name}`](#{_anchor(f'{path} {name}')}) | {_cell(_first_sentence(child))} |"
            for name, child in children
        ]
        lines.append("")
    return lines


def _walk(command: Any, ctx: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    yield path, command, ctx
    for name, child in _children(command, ctx):
        yield from _walk(child, _context(child, name, ctx), f"{path} {name}")


def command_paths(program: str, app: Any) -> list[str]:
    """Every visible command of ``program`` as typed (``aicr``, ``aicr recipe``, ...), depth first."""
    root = _click_command(app)
    return [path for path, _, _ in _walk(root, _context(root, program, None), program)]


def render(program: str, app: Any) -> str:
    """The Markdown page of one program: its root, then every command depth first."""
    root = _click_command(app)
    ctx = _context(root, program, None)
    lines = [
        f"# `{program}` command reference",
        "",
        f"Generated from the program's own command tree by `{REGENERATE}`; do not edit by hand. "
        f"Every command also takes `-h`/`--help`. The guide with worked examples is "
        f"[docs/{_guide(program)}](../{_guide(program)}).",
        "",
    ]
    for path, command, cmd_ctx in _walk(root, ctx, program):
        lines += _section(command, cmd_ctx, path)
    return "\n".join(lines).rstrip() + "\n"


def _guide(program: str) -> str:
    return f"{program}.md"


def render_all() -> dict[str, str]:
    """File name -> content for every program, in a fixed order."""
    return {f"{program}.md": render(program, load_app(program)) for program in sorted(PROGRAMS)}


def write(out_dir: Path) -> list[Path]:
    """Write every page into ``out_dir`` (created if missing); return the paths written."""
    from shared import files

    files.program_folder(out_dir)
    written = []
    for name, text in render_all().items():
        path = out_dir / name
        files.atomic_write_text(path, text)
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m shared.cli_reference OUT_DIR\n")
        return 2
    for path in write(Path(argv[0])):
        sys.stdout.write(f"{path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
