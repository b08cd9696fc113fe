"""What the three programs share at their edge: the root app and the entry wrapper.

A program is a ``Program`` (name, help, environment prefix) whose ``app`` is the root typer app
with the global options (``--debug``, ``--log-json``, ``--version``; no ``-v``, which kubectl users
read as verbosity), its command groups, and the ``completion`` and ``version`` commands every
program has (``shared.cli_completion`` answers the shell's Tab requests here too). The
wrapper is the single place that turns an error into one stderr line and an exit status
(shared.errors), sets up logging on stderr, and refuses a single-value flag given twice, which
click would otherwise silently let the last one win.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

import typer

from shared import __version__, cli_completion, errors, files, logs

logger = logging.getLogger(__name__)

DEBUG_FLAG = "--debug"
LOG_JSON_FLAG = "--log-json"


def make_app(name: str, help_text: str) -> typer.Typer:
    """A typer app with plain help (no rich markup: faster, and user text prints literally)."""
    return typer.Typer(
        name=name,
        help=help_text,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=False,
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )


class CommandGroup(Protocol):
    """A program's command module (``aicr.recipe``, ``nvsentinel.monitor``): it adds its commands."""

    def register(self, app: typer.Typer, /) -> None: ...


@dataclass(frozen=True)
class Program:
    """One of the programs: its name, the help of its root command and the prefix of its environment
    variables (``NVCRE`` for nvcrectl: ``NVCRE_DEBUG``, ``NVCRE_LOG_JSON``)."""

    name: str
    help_text: str
    env_prefix: str
    completers: Mapping[str, cli_completion.Completer] = field(default_factory=dict)
    """Completion of options whose values the program knows but another module declares (flag ->
    completer); see ``shared.cli_completion.respond``."""

    def app(self, *groups: CommandGroup) -> typer.Typer:
        """The root app with the global options, then the commands of each group, in this order."""
        app = make_app(self.name, self.help_text)
        add_global_options(app, self.name, self.env_prefix)
        for group in groups:
            group.register(app)
        add_completion_command(app, self.name)
        add_version_command(app, self.name)
        return app


class GlobalOptions:
    """Options every program takes before its command; held on the typer context."""

    def __init__(self, *, debug: bool, log_json: bool) -> None:
        self.debug = debug
        self.log_json = log_json


def add_global_options(app: typer.Typer, program: str, env_prefix: str) -> None:
    """Register ``--debug``, ``--log-json`` and ``--version`` on the root callback."""

    def _version(value: bool) -> None:
        if value:
            sys.stdout.write(version_line(program))
            raise typer.Exit(0)

    @app.callback()
    def _root(
        ctx: typer.Context,
        debug: bool = typer.Option(
            False,
            DEBUG_FLAG,
            envvar=f"{env_prefix}_DEBUG",
            help="Debug logs and tracebacks on stderr (secrets stay redacted).",
        ),
        log_json: bool = typer.Option(
            False, LOG_JSON_FLAG, envvar=f"{env_prefix}_LOG_JSON", help="Structured JSON logs on stderr."
        ),
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ) -> None:
        logs.configure(program, debug=debug, log_json=log_json)
        ctx.obj = GlobalOptions(debug=debug, log_json=log_json)


def examples(*lines: str) -> str:
    """A command's ``epilog``: an Examples section kept as written (click's ``\\b`` stops it
    rewrapping). Each line is a whole command (tests/cli/test_help_examples.py parses each one
    against the command's flags) or a ``# comment`` saying what the next one does."""
    body = "\n".join(f"  {line}" for line in lines)
    return f"Examples:\n\n\b\n{body}"


def version_line(program: str) -> str:
    """What ``--version`` and the ``version`` command print."""
    return f"{program} version {__version__}\n"


def add_version_command(app: typer.Typer, program: str) -> None:
    """``PROGRAM version``, as upstream aicr and kubectl have it beside ``--version``."""

    @app.command("version")
    def version() -> None:
        """Print the version."""
        sys.stdout.write(version_line(program))


Shell = Annotated[
    str,
    typer.Argument(
        help=f"One of: {', '.join(cli_completion.SHELLS)}.",
        shell_complete=cli_completion.choices(cli_completion.SHELLS),
        show_default=False,
    ),
]


def add_completion_command(app: typer.Typer, program: str) -> None:
    """``PROGRAM completion bash|zsh|fish``: click's completion script for that shell."""

    @app.command(
        "completion",
        epilog=examples(
            "# bash 4.4 or later: add to ~/.bashrc",
            f'eval "$({program} completion bash)"',
            "# zsh: add to ~/.zshrc, after compinit",
            f'eval "$({program} completion zsh)"',
            "# fish",
            f"{program} completion fish > ~/.config/fish/completions/{program}.fish",
        ),
    )
    def completion(ctx: typer.Context, shell: Shell) -> None:
        """Print the shell completion script: commands, flags, option values and, with a reachable
        cluster, object names (asked with a one-second timeout)."""
        if shell not in cli_completion.SHELLS:
            raise errors.InvalidInput(f"unknown shell {shell!r}; valid shells are: {', '.join(cli_completion.SHELLS)}")
        sys.stdout.write(cli_completion.source(ctx.find_root().command, program, shell) + "\n")


def _command_for(root: Any, args: Sequence[str]) -> Any:
    """Follow sub-command names through the click tree to the command being invoked."""
    # Duck-typed on purpose: typer vendors its own click, and only these attributes are stable.
    command = root
    for token in args:
        if token.startswith("-"):
            continue
        children = getattr(command, "commands", None)
        if not children:
            break
        if token in children:
            command = children[token]
    return command


def _one_suggestion(root: Any) -> None:
    """click itself suggests a near command name ("Did you mean 'verify'?"); typer's groups would
    add the same suggestion a second time, so theirs is switched off in the whole tree."""
    stack = [root]
    while stack:
        group = stack.pop()
        if hasattr(group, "suggest_commands"):
            group.suggest_commands = False
        stack.extend(c for c in getattr(group, "commands", {}).values() if hasattr(c, "commands"))


def check_repeated_flags(root: Any, args: Sequence[str]) -> None:
    """A single-value flag may appear once; repeating it is ambiguous, so it is an error."""
    command = _command_for(root, args)
    for param in getattr(command, "params", []):
        if getattr(param, "param_type_name", "") != "option":
            continue
        if getattr(param, "multiple", False) or getattr(param, "count", False) or getattr(param, "is_flag", False):
            continue
        names = list(param.opts) + list(param.secondary_opts)
        seen = 0
        for token in args:
            if token == "--":
                break
            if token in names or any(token.startswith(n + "=") for n in names if n.startswith("--")):
                seen += 1
        if seen > 1:
            longest = max(names, key=len)
            raise errors.InvalidInput(f"flag {longest} can only be specified once")


INTERRUPTED = 130
"""Ctrl-C, as shells report a command killed by SIGINT (128 + 2)."""


def run(
    app: typer.Typer,
    program: str,
    argv: Sequence[str] | None = None,
    *,
    env_prefix: str | None = None,
    completers: Mapping[str, cli_completion.Completer] | None = None,
) -> int:
    """Run ``app`` and return the exit status; every error becomes one stderr line.

    ``env_prefix`` names the debug variable (``{env_prefix}_DEBUG``, as ``add_global_options``
    declares it); without it, the program's name in capitals. ``completers``: the program's
    (``Program.completers``), used when the shell asks for candidates."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug_env = f"{env_prefix or program.upper()}_DEBUG"
    debug = DEBUG_FLAG in args or os.environ.get(debug_env, "").lower() in ("1", "true")
    command = typer.main.get_command(app)
    _one_suggestion(command)
    try:
        answered = cli_completion.respond(command, program, completers=completers)
        if answered is not None:  # the shell asked for candidates: print them, run nothing
            return answered
        check_repeated_flags(command, args)
        result = command.main(args=args, prog_name=program, standalone_mode=False)
        sys.stdout.flush()  # a full disk under a redirected stdout shows here, not at exit
        if result == INTERRUPTED:  # typer turns Ctrl-C into a returned 130, without a word
            raise KeyboardInterrupt
        return int(result) if isinstance(result, int) else 0
    except (Exception, KeyboardInterrupt) as exc:
        return failure_status(exc, debug=debug)


def failure_status(exc: Exception | KeyboardInterrupt, *, debug: bool) -> int:
    """The exit status of a command that raised ``exc``, after its one stderr line: also what the
    console scripts' fast paths (``aicr.fast_bundle``) report, so a failure reads the same there."""
    if isinstance(exc, errors.ToolError):
        _report(exc, debug, exc.line())
        return exc.exit_code
    if isinstance(exc, OSError):
        return os_error_status(exc, debug)
    if isinstance(exc, (KeyboardInterrupt, typer.Abort, typer.Exit)):
        return _stopped(exc)
    return _unexpected(exc, debug)


def _stopped(exc: BaseException) -> int:
    """Ctrl-C (and a refused confirmation) is 130 with one line; another ``typer.Exit`` keeps its status."""
    if isinstance(exc, typer.Exit):
        return int(exc.exit_code)
    sys.stderr.write("error: interrupted\n" if isinstance(exc, KeyboardInterrupt) else "error: aborted\n")
    return INTERRUPTED


def os_error_status(exc: OSError, debug: bool) -> int:
    """Files are written through ``shared.files``, which names them; an OSError left is stdout's own.

    A closed pipe (``| head``) is success; a full disk under a redirected stdout is DiskFull (exit
    9); anything else is a bug."""
    if isinstance(exc, BrokenPipeError):
        return 0
    if exc.errno not in files.FULL:
        return _unexpected(exc, debug)
    files.silence_stdout()
    full = errors.DiskFull(f"cannot write: {exc.strerror or exc}", where=files.STDOUT)
    _report(full, debug, full.line())
    return full.exit_code


def _unexpected(exc: Exception, debug: bool) -> int:
    """A usage error from click (invalid input, with a pointer to --help), or an internal error."""
    if not _is_usage_error(exc):
        _report(
            exc,
            debug,
            f"error: internal error: {logs.redact(str(exc)) or type(exc).__name__}"
            f"{'' if debug else ' (run with --debug for a traceback)'}",
        )
        return errors.Internal.exit_code
    text = str(exc.format_message())  # type: ignore[attr-defined]
    if type(exc).__name__ == "NoArgsIsHelpError":
        sys.stderr.write(text + "\n")
        return errors.InvalidInput.exit_code
    # Usage errors (unknown flag, missing argument, bad choice) are invalid input.
    ctx = getattr(exc, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    sys.stderr.write(f"error: {text}{hint}\n")
    return errors.InvalidInput.exit_code


def _is_usage_error(exc: BaseException) -> bool:
    """A click-style usage error (unknown flag, bad value), whichever click typer brings."""
    return type(exc).__module__.split(".")[0] in ("click", "typer") and hasattr(exc, "format_message")


def _report(exc: BaseException, debug: bool, line: str) -> None:
    if debug:
        sys.stderr.write(logs.redact("".join(traceback.format_exception(exc))))
    sys.stderr.write(line + "\n")


def entry(app_factory: Callable[[], typer.Typer], program: Program) -> None:
    """Console-script body: build the app, run it, exit with its status."""
    sys.exit(run(app_factory(), program.name, env_prefix=program.env_prefix, completers=program.completers))
