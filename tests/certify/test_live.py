"""The progress of ``certification run --wait``: the live view and the plain lines on stderr.

Covers: the rendering of a running Certification (categories, round and stage, which group runs on
which nodes, measurements so far, the runner's note) through a recording rich console; the plain
event lines of two successive states (groups started, finished with their measurement or failure,
the category's end), with big rounds summarised; ``Display`` writing plain lines when the stream is
not a terminal; and ``run --wait`` end to end on the simulated cluster: stdout holds only the
report, stderr the progress lines.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from shared.certify import live, models
from shared.sim import SimServer
from shared.sim.gpu import fabric

Phase = models.Phase


def _group(
    name: str,
    nodes: list[str],
    *,
    passed: bool | None = None,
    busbw: float | None = None,
    reason: models.FailureReason | None = None,
) -> models.GroupRun:
    return models.GroupRun(
        name=name,
        nodes=nodes,
        job=f"job-{name}",
        phase=Phase.RUNNING if passed is None else Phase.SUCCEEDED if passed else Phase.FAILED,
        passed=passed,
        reason=reason,
        measurements={} if busbw is None else {"busBandwidthGBps": busbw},
    )


def _cert(
    *rounds: models.Round, status: Phase = Phase.RUNNING, failed: list[models.FailedNode] | None = None
) -> models.Certification:
    cert = models.Certification.model_validate(
        {
            "metadata": {"name": "rack-7", "namespace": "default"},
            "kind": "Certification",
            "spec": {"categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]},
        }
    )
    cert.status.phase = Phase.RUNNING
    cert.status.categoryStatuses = [
        models.CategoryStatus(
            domain="communication",
            variant="nccl-all-reduce",
            status=status,
            rounds=list(rounds),
            failedNodes=failed or [],
        )
    ]
    return cert


FIRST = models.Round(
    round=1,
    stage="full-scale",
    groups=[
        _group("g1", ["node-000", "node-001", "node-002", "node-003"], passed=True, busbw=361.5),
        _group(
            "g2",
            ["node-004", "node-005", "node-006", "node-007", "node-008"],
            passed=False,
            busbw=148.0,
            reason=models.FailureReason.THRESHOLD,
        ),
    ],
)
SECOND = models.Round(round=2, stage="identification", groups=[_group("g3", ["node-004", "node-000"])])


def _text(renderable: Any) -> str:
    console = Console(record=True, width=160, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_the_live_view_shows_category_round_groups_on_their_nodes_and_measurements_so_far() -> None:
    shown = _text(live.render(_cert(FIRST, SECOND), note="communication/nccl-all-reduce: isolation round 2"))
    assert "Certification default/rack-7: Running" in shown
    category_row = next(line for line in shown.splitlines() if line.startswith("communication/nccl-all-reduce "))
    assert category_row.split()[1:4] == ["Running", "2", "(identification)"]
    assert "1 running, 0 passed, 0 failed" in category_row
    assert "busBandwidthGBps=148" in category_row  # the lowest of the first round so far
    assert "round 2 (identification)" in shown
    group_row = next(line for line in shown.splitlines() if line.startswith("g3 "))
    assert group_row.split() == ["g3", "node-004,node-000", "running", "-"]
    assert "isolation round 2" in shown


def test_the_live_view_counts_the_nodes_of_a_big_group_instead_of_naming_them_all() -> None:
    big = models.Round(round=1, stage="full-scale", groups=[_group("all", [f"node-{i:03d}" for i in range(64)])])
    shown = _text(live.render(_cert(big)))
    assert "node-000,node-001,node-002,node-003 +60" in shown


def test_plain_lines_tell_what_changed_between_two_states() -> None:
    running = _cert(
        models.Round(
            round=1,
            stage="full-scale",
            groups=[_group("g1", ["node-000", "node-001"]), _group("g2", ["node-002", "node-003"])],
        )
    )
    assert live.events(None, running) == [
        "communication/nccl-all-reduce: round 1 (full-scale): g1 started on node-000,node-001",
        "communication/nccl-all-reduce: round 1 (full-scale): g2 started on node-002,node-003",
    ]
    finished = _cert(
        models.Round(
            round=1,
            stage="full-scale",
            groups=[
                _group("g1", ["node-000", "node-001"], passed=True, busbw=361.5),
                _group(
                    "g2", ["node-002", "node-003"], passed=False, busbw=148.0, reason=models.FailureReason.THRESHOLD
                ),
            ],
        ),
        status=Phase.FAILED,
        failed=[models.FailedNode(name="node-002", reason=models.FailureReason.THRESHOLD, message="", value=148.0)],
    )
    assert live.events(running, finished) == [
        "communication/nccl-all-reduce: round 1: g1 on node-000,node-001 passed: busBandwidthGBps=361.5",
        "communication/nccl-all-reduce: round 1: g2 on node-002,node-003 failed (ThresholdViolation): "
        "busBandwidthGBps=148",
        "communication/nccl-all-reduce: failed (busBandwidthGBps=148); failed nodes: node-002",
    ]
    assert live.events(finished, finished) == []


def test_a_big_round_is_summarised_but_its_failed_groups_are_named() -> None:
    groups = [_group(f"p{i}", [f"node-{2 * i:03d}", f"node-{2 * i + 1:03d}"]) for i in range(20)]
    before = _cert(models.Round(round=1, stage="screening", groups=groups))
    assert live.events(None, before) == [
        "communication/nccl-all-reduce: round 1 (screening): 20 groups started on 40 nodes"
    ]
    done = [_group(g.name, g.nodes, passed=g.name != "p7") for g in groups]
    after = _cert(models.Round(round=1, stage="screening", groups=done))
    assert live.events(before, after) == [
        "communication/nccl-all-reduce: round 1: p7 on node-014,node-015 failed",
        "communication/nccl-all-reduce: round 1: 19 groups passed",
    ]


def test_the_display_writes_plain_lines_when_the_stream_is_no_terminal() -> None:
    stream = io.StringIO()
    with live.Display(stream) as display:
        assert not display.live_mode
        display.note("communication/nccl-all-reduce: round 1: 1 group(s) running")
        display.status(_cert(models.Round(round=1, stage="full-scale", groups=[_group("g1", ["node-000"])])))
        display.note("waiting: runner-b holds the run")
    assert stream.getvalue() == (
        "communication/nccl-all-reduce: round 1 (full-scale): g1 started on node-000\nwaiting: runner-b holds the run\n"
    )


def test_the_live_display_draws_the_view_on_a_terminal() -> None:
    stream = io.StringIO()
    with live.Display(stream, live=True) as display:
        display.status(_cert(FIRST, SECOND))
    assert "round 2 (identification)" in stream.getvalue()


def test_run_wait_keeps_stdout_for_the_report_and_writes_progress_lines_on_stderr(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    gpu_sim.add_gpu_nodes(8, racks=2)
    gpu_sim.fabric.inject(fabric.parse_all(["node-002:nic=0.4"]))
    gpu_sim.vclock.set_speed(3000)
    kube = ("--kubeconfig", str(sim_kubeconfig))
    assert run_cli("nvcrectl", "crds", "install", *kube).code == 0
    cert = tmp_path / "live.yaml"
    cert.write_text(
        "apiVersion: nvcre.nvidia.com/v1alpha1\nkind: Certification\nmetadata: {name: live}\n"
        "spec:\n  maxBytes: 1G\n  thresholds: {busBandwidthGBps: 'value >= 300'}\n"
        "  categories:\n    - {domain: communication, variant: nccl-all-reduce}\n",
        encoding="utf-8",
    )
    ran = run_cli("nvcrectl", "certification", "run", "--cert-file", str(cert), "--wait", *kube)
    assert ran.code == 1, ran.stderr
    assert ran.stdout.startswith("Certification default/live: Failed")
    lines = ran.stderr.splitlines()
    assert lines[0].startswith("communication/nccl-all-reduce: round 1 (")
    assert any(" failed (ThresholdViolation): " in line and "busBandwidthGBps=148" in line for line in lines)
    assert lines[-1].startswith("communication/nccl-all-reduce: failed (")
    assert lines[-1].endswith("busBandwidthGBps=148); failed nodes: node-002")
    assert "\x1b[" not in ran.stderr  # no terminal control codes off a terminal
