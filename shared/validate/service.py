"""The call behind ``aicr validate``: load the recipe, measure (or load) the cluster, run the checks.

Validation's own entry point, so measuring stays in ``shared.snapshot`` and validating here, and
the dependency runs one way: validation uses the snapshot package (to load documents, to measure
the live cluster when no snapshot is given, and, in ``cluster``, to read Helm releases); the
snapshot package never imports validation. The command opens its ``ClusterAccess`` from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from shared.snapshot.service import ClusterAccess

if TYPE_CHECKING:
    from shared.validate.run import Outcome

__all__ = ["ClusterAccess", "validate"]  # the command opens its ClusterAccess from here


def validate(
    *,
    recipe: str,
    snapshot: str | None,
    access: ClusterAccess,
    wait: bool,
    timeout: float | None,
    data_dir: Path | None = None,
) -> Outcome:
    """The driver the recipe pins and its constraints, node by node where they concern nodes,
    against the snapshot (live when none); then the components' asserts, live."""
    from shared import clock
    from shared.snapshot import service as snapshots
    from shared.validate import run

    loaded = snapshots.load_recipe(recipe, access)
    driver = snapshots.pinned_driver(loaded, data_dir=data_dir)
    measured, _ = snapshots.snapshot_or_live(snapshot, access)
    ticks = clock.for_api_client(access.api)  # virtual time on the simulator, wall time elsewhere
    return run.validate(
        loaded,
        measured,
        api=access.api,
        driver=driver,
        wait=wait,
        timeout=timeout,
        now=ticks.monotonic,
        sleep=ticks.sleep,
    )
