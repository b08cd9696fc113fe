"""Shell completion for the three programs: click's own machinery, switched on at the entry wrapper.

``aicr completion bash|zsh|fish`` prints click's script for that shell (``source``); the script
calls the program again on every Tab with ``_AICR_COMPLETE=bash_complete`` (zsh and fish alike)
and the words typed so far, and ``respond`` answers from the click tree: commands, flags, the
values of closed options (``choices``, attached where the option is declared) and object names
read from the cluster (``objects``). Nothing here writes a completion script by hand.

Object names come from ``shared.kube.names``: one GET with a one-second timeout; any failure is no
candidates and no message, because the shell prints whatever the program writes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

SHELLS = ("bash", "zsh", "fish")
"""The shells click ships a completion class for (PowerShell is typer's, not click's)."""

Completer = Callable[[Any, Any, str], list[Any]]
"""click's ``shell_complete`` callback: ``(ctx, param, incomplete) -> candidates``."""


def complete_var(program: str) -> str:
    """The variable the script sets to ask for candidates (click's naming: ``_NVCRECTL_COMPLETE``)."""
    return f"_{program.replace('-', '_').upper()}_COMPLETE"


def _classes() -> dict[str, Any]:
    # click's classes by name, not click's registry: typer replaces the registry's entries with
    # its own scripts when its completion is initialised, and ours must stay click's.
    from click import shell_completion

    return {
        "bash": shell_completion.BashComplete,
        "zsh": shell_completion.ZshComplete,
        "fish": shell_completion.FishComplete,
    }


def source(command: Any, program: str, shell: str) -> str:
    """The completion script for ``shell``, to be evaluated by it (see the user guides)."""
    return str(_classes()[shell](command, {}, program, complete_var(program)).source())


def respond(
    command: Any,
    program: str,
    *,
    completers: Mapping[str, Completer] | None = None,
    environ: Mapping[str, str] | None = None,
) -> int | None:
    """Answer a completion request when the script made one (its variable is set): the status to
    exit with; ``None`` when this run is not a completion request.

    ``completers`` (flag -> completer) fill in options declared without one, wherever the flag
    appears in the tree: a program's own vocabulary for an option another module declares."""
    env = os.environ if environ is None else environ
    instruction = env.get(complete_var(program), "")
    if not instruction:
        return None
    attach(command, completers or {})
    shell, _, action = instruction.partition("_")
    cls = _classes().get(shell)
    if cls is None or action not in ("complete", "source"):
        return 1
    completer = cls(command, {}, program, complete_var(program))
    sys.stdout.write(completer.complete() if action == "complete" else completer.source())
    sys.stdout.write("\n")
    return 0


def attach(command: Any, completers: Mapping[str, Completer]) -> None:
    """Give every option of the tree named in ``completers`` that completer, unless it has its own."""
    stack = [command]
    while stack:
        current = stack.pop()
        stack.extend(getattr(current, "commands", {}).values())
        for param in current.params:
            if getattr(param, "_custom_shell_complete", None) is not None:
                continue
            chosen = next((completers[o] for o in param.opts if o in completers), None)
            if chosen is not None:
                param._custom_shell_complete = chosen


def choices(values: Iterable[str] | Callable[[], Iterable[str]]) -> Completer:
    """Candidates for an option with a closed set of values; a callable is asked only on Tab, so a
    list that costs imports (the deployers) is not built for ``--help``."""

    def complete(_ctx: Any, _param: Any, incomplete: str) -> list[str]:
        listed = values() if callable(values) else values
        return [v for v in listed if v.startswith(incomplete)]

    return complete


def objects(path: Callable[[str | None], str], *, namespaced: bool = True) -> Completer:
    """Candidates for an argument naming cluster objects: ``path(namespace)`` is their collection.

    The namespace is ``-n`` when typed before the name, else the kubeconfig context's, as the
    command itself resolves it; ``--kubeconfig`` and ``--context`` are read the same way."""

    def complete(ctx: Any, _param: Any, incomplete: str) -> list[str]:
        from shared.kube import names

        # typer converts values when it calls the command; during completion they are still text
        given = ctx.params.get("kubeconfig")
        kubeconfig = Path(given) if given else None
        context: str | None = ctx.params.get("context")
        namespace = None
        if namespaced:
            namespace = ctx.params.get("namespace") or _context_namespace(kubeconfig, context)
            if namespace is None:
                return []
        found = names.names(path(namespace), kubeconfig=kubeconfig, context=context)
        return [n for n in found if n.startswith(incomplete)]

    return complete


def _context_namespace(kubeconfig: Path | None, context: str | None) -> str | None:
    from shared.kube import client

    try:
        return client.context_namespace(kubeconfig=kubeconfig, context=context)
    except Exception:  # no configuration: no names, and nothing printed
        return None
