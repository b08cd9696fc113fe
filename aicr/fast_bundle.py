"""``aicr bundle`` rendered before the command line framework is imported.

Importing typer and click (and building the click command from the signature in aicr/bundle.py)
costs about a tenth of a bundle run's CPU (40 ms of 340), and CI pipelines render the same recipe
on every push. So the console script first tries this narrow path, as ``aicr.fast`` does for
``recipe``: it takes only a plain request (``-r FILE -o DIR``, and ``-d``, ``--repo``,
``--force``, in the spellings the full command accepts, read by ``aicr.fast.options``) and calls
the command's own service function with the same request, the same logging set-up and the same
error reporting (``shared.cli.failure_status``). Anything else
(another flag, a repeated flag, a value that looks like a flag, a ConfigMap or URL recipe, an
``oci://`` destination, the debug or completion variables) returns None and the full program
runs. Unlike the recipe path, a failure here is reported here, not handed on: the service
function refuses every bad input before it writes, exactly as it does under the full program.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from aicr import fast

COMMAND = "bundle"
FLAGS = {
    "--recipe": "recipe",
    "-r": "recipe",
    "--output": "output",
    "-o": "output",
    "--deployer": "deployer",
    "-d": "deployer",
    "--repo": "repo",
}
"""The flags of ``aicr bundle`` this path takes (name -> parameter); see aicr/bundle.py."""
SWITCHES = {"--force": "force"}
"""Its boolean flags (no value; ``--force=x`` is the full program's to refuse)."""


def parse(argv: Sequence[str]) -> dict[str, str | bool] | None:
    """The parameters of a plain ``bundle`` request, or None when this path does not take it."""
    if not argv or argv[0] != COMMAND:
        return None
    given = fast.options(argv[1:], FLAGS, SWITCHES)
    return given if given is not None and _plain(given) else None


def _plain(given: dict[str, str | bool]) -> bool:
    """Both files named, and neither a ConfigMap, a URL or an OCI registry (the full program says
    what it does with those); without one the full command names the missing option."""
    named = [given.get("recipe"), given.get("output")]
    return all(isinstance(value, str) and "://" not in value for value in named)


def bundle(argv: Sequence[str]) -> int | None:
    """The exit status of ``aicr ARGV`` rendered here, or None to run the full program."""
    if any(variable in os.environ for variable in fast.ENVIRONMENT):
        return None
    given = parse(argv)
    if given is None:
        return None
    try:
        from shared import logs, output
        from shared.bundle import request, service

        logs.configure("aicr", debug=False, log_json=False)  # as the root callback does
        result = service.bundle(
            request.BundleRequest(
                recipe=str(given["recipe"]),
                output=Path(str(given["output"])),
                deployer=str(given.get("deployer", "helm")),
                repo=str(given["repo"]) if "repo" in given else None,
                force=bool(given.get("force", False)),
            )
        )
        output.write_data(result.text())
        sys.stdout.flush()
    except (Exception, KeyboardInterrupt) as exc:
        from shared import cli

        return cli.failure_status(exc, debug=False)
    return 0
