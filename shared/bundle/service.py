"""The two calls behind ``aicr bundle`` and ``aicr verify``.

``bundle`` computes the plan first (every input error surfaces before anything is created), then
renders into a staging folder next to the target that is renamed into place only when complete:
a failure leaves nothing behind, and a run never mixes old and new files. Nothing written depends
on the clock or the machine, so two runs give byte-identical trees.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from shared import errors, files, grammars
from shared.bundle import checksums, deployers, paths
from shared.bundle import plan as plan_mod
from shared.bundle.request import BundleRequest
from shared.bundle.result import BundleResult

logger = logging.getLogger(__name__)

RECIPE_FILE = "recipe.yaml"


def _check_output(target: Path) -> None:
    """Refuse targets whose replacement would destroy the user's work even with --force."""
    resolved = target.resolve()
    protected = {Path.cwd().resolve(), Path.home().resolve(), Path(resolved.anchor)}
    if resolved in protected or resolved in Path.cwd().resolve().parents:
        raise errors.InvalidInput(
            "refusing to write a bundle over the current, home or root directory (name a new folder)", where=str(target)
        )


def _check_repo(repo: str | None) -> None:
    """The URL is pasted into the Applications and the printed push instructions: its grammar first."""
    problem = None if repo is None else grammars.git_repository(repo)
    if problem is not None:
        raise errors.InvalidInput(problem, where="--repo")


def bundle(request: BundleRequest) -> BundleResult:
    """Write the bundle ``request`` asks for. Raises InvalidInput (nothing written) on bad input."""
    deployer = deployers.parse(request.deployer)
    _check_repo(request.repo)
    _check_output(request.output)
    plan = plan_mod.build(request)
    render = deployers.renderer(deployer)
    with files.staged_directory(request.output, force=request.force) as staging:
        result = render(plan, staging)
        recipe_path = paths.safe_join(staging, RECIPE_FILE)
        files.write_staged(recipe_path, plan.recipe_text)
        written = [rel for rel in checksums.bundle_files(staging)]
        listing = checksums.render((rel, checksums.digest(staging / rel)) for rel in written)
        files.write_staged(staging / checksums.FILE_NAME, listing)
        # The staging folder is private (mkdtemp); the bundle is meant to be read and committed.
        os.chmod(staging, 0o755)
    logger.debug(
        "bundle generated", extra={"deployer": deployer.value, "files": len(written) + 1, "output": str(request.output)}
    )
    return result.model_copy(
        update={
            "output": str(request.output),
            "files": sorted([*written, checksums.FILE_NAME]),
            "notes": [*plan.notes, *result.notes],
        }
    )


def verify(directory: Path) -> checksums.Verification:
    """Recompute the checksums of a bundle; the verdict is the result's ``passed``."""
    return checksums.verify(directory)
