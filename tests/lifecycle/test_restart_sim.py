"""A lifecycle controller killed at any point of a request converges to the same end state.

Covers: a request's 13 writes are the finalizer, two node joins, two active marks, two Job
creations, the Running status, the verdict, two Job deletions and two node settlements; for k
before the finalizer, between the joins, between the active marks, between the Job creations,
before the verdict, between the verdict and the deletions and between the settlements (one kill
in each phase), the controller's writes after the k-th vanish
(the simulated API drops them, as if the process died there), a new replica with no memory takes
over, and the end is always the same: the request Failed blaming exactly the node with a dead GPU,
one attempt per group (no test run twice), the healthy node schedulable with no bookkeeping left,
the failed node cordoned by validation and labelled validation-failed. Replicas are also replaced
between every pass, so no progress lives only in memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import errors
from shared.lifecycle import controller as lifecycle
from shared.lifecycle import models
from shared.lifecycle import resource as vresource
from shared.sim.gpu import fabric
from tests.lifecycle import kit

VALUES = """
lifecycle-manager:
  runCertificationController: false
  config:
    defaultTests: ["dcgm-diag-test"]
    providers:
      k8s-job-provider: {kind: Job, retries: 0, timeoutSeconds: 1800}
"""


@pytest.mark.parametrize("kill_after", [0, 2, 4, 6, 8, 9, 12], ids=lambda k: f"killed-after-{k}")
def test_a_controller_killed_after_any_write_converges_to_the_same_end_state(
    gpu_sim: Any, api_client: Any, tmp_path: Path, kill_after: int
) -> None:
    sim, api = gpu_sim, api_client
    names = sim.add_gpu_nodes(2)
    sim.fabric.inject(fabric.parse_all([f"{names[1]}:gpu-dead"]))
    template = kit.make(api, tmp_path, VALUES)
    vresource.create(api, "vr-restart", names, [], source="test")
    sim.faults.configure(kill_after_writes=kill_after, kill_identity=None)
    for _ in range(40):  # the replica that dies
        errors_before = lifecycle.STEP_ERRORS.value()
        try:
            kit.fresh(template).reconcile_once()
        except errors.ToolError:
            break
        if lifecycle.STEP_ERRORS.value() > errors_before:
            break
        sim.advance(15)
    sim.faults.clear()
    for _ in range(60):  # its successors, one per pass
        kit.fresh(template).reconcile_once()
        vr, _ = vresource.get(api, "vr-restart")
        if vr.status.phase in models.TERMINAL:
            break
        sim.advance(15)
    kit.fresh(template).reconcile_once()
    vr, _ = vresource.get(api, "vr-restart")
    assert vr.status.phase is models.Phase.FAILED
    assert [(g.nodes, [a.objectName for a in g.attempts], g.phase) for g in vr.status.testGroups] == [
        ([names[0]], ["vr-restart-g0-a1"], models.Phase.SUCCEEDED),
        ([names[1]], ["vr-restart-g1-a1"], models.Phase.FAILED),
    ]
    assert kit.state(api, names[0]) == (None, False, None, [])
    assert kit.state(api, names[1]) == ("validation-failed", True, "validation", ["vr-restart"])
