"""nvsentinel's commands end to end: exit codes and output.

Covers: `rules check` exit 1 with one stderr line per problem and exit 0 on the defaults;
`monitor xid --dry-run -o json` prints one NDJSON event per Xid line; `crds install`,
`events publish` (duplicates once), `events list -o json`, `rules replay`, `breaker status`,
`nodes` and `nodes release` against the simulated cluster.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shared.health import settings
from tests.health.test_offline import SEED_VALUES

EVENT = {
    "agent": "gpu-health-monitor",
    "componentClass": "GPU",
    "checkName": "GpuXidError",
    "isFatal": True,
    "recommendedAction": "RESTART_BM",
    "errorCode": ["79"],
    "nodeName": "node-001",
    "generatedTimestamp": "2026-01-01T00:00:00Z",
}


def test_rules_check_fails_with_one_line_per_problem(run_cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "v.yaml"
    path.write_text(
        "fault-quarantine:\n  ruleSets:\n    - name: x\n      match: {all: [{kind: HealthEvent, "
        "expression: 'event.isFatall'}]}\n"
    )
    result = run_cli("nvsentinel", "rules", "check", "-f", str(path))
    assert result.code == 1
    assert result.stderr == (
        f"error: {path}:4:60: rule set 'x': match.all[0]: "
        "HealthEvent has no field 'isFatall' (did you mean 'isFatal'?)\n"
    )


def test_rules_check_passes_the_default_values(run_cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "v.yaml"
    path.write_text(settings.default_text())
    assert run_cli("nvsentinel", "rules", "check", "-f", str(path)).code == 0


def test_monitor_xid_dry_run_prints_one_event_per_xid_line(run_cli: Any, team_shared: Path) -> None:
    log = team_shared / "reference/samples/xid/kernel-log-lines.txt"
    result = run_cli("nvsentinel", "monitor", "xid", "--file", str(log), "--node", "node-7", "--dry-run", "-o", "json")
    assert result.code == 0
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(events) == 32  # 30 Xid lines, a GPU that failed to initialise, one fallen off the bus without an Xid
    assert {e["agent"] for e in events} == {"syslog-health-monitor"}
    assert events[12]["errorCode"] == ["79"] and events[12]["recommendedAction"] == "RESTART_BM"


def test_publish_list_replay_and_breaker_against_the_cluster(
    run_cli: Any, gpu_sim: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    gpu_sim.add_gpu_nodes(2)
    k = ["--kubeconfig", str(sim_kubeconfig)]
    assert run_cli("nvsentinel", "crds", "install", *k).code == 0
    events = tmp_path / "e.ndjson"
    events.write_text(json.dumps(EVENT) + "\n" + json.dumps(EVENT) + "\n")
    published = run_cli("nvsentinel", "events", "publish", "-f", str(events), *k)
    assert published.stderr == "published 1 event(s), 0 duplicate(s) skipped\n"
    again = run_cli("nvsentinel", "events", "publish", "-f", str(events), *k)
    assert again.stderr == "published 0 event(s), 1 duplicate(s) skipped\n"
    listing = run_cli("nvsentinel", "events", "list", "-o", "json", *k)
    assert listing.code == 0, listing.stderr
    listed = json.loads(listing.stdout)
    assert [(e["node"], e["recommendedAction"], e["phase"]) for e in listed] == [("node-001", "RESTART_BM", "")]
    seed = tmp_path / "settings.yaml"
    seed.write_text(SEED_VALUES)
    replayed = run_cli("nvsentinel", "rules", "replay", "-f", str(seed), "--events", str(events))
    assert replayed.stdout == "NODE      CORDONED  RULE SETS\nnode-001  True      GPU fatal error ruleset\n"
    shown = run_cli("nvsentinel", "breaker", "status", "-o", "json", *k)
    assert shown.code == 0, shown.stderr
    status = json.loads(shown.stdout)
    assert (status["status"], status["threshold"], status["gpuNodes"]) == ("CLOSED", 1, 2)
    assert run_cli("nvsentinel", "nodes", *k).code == 0
    released = run_cli("nvsentinel", "nodes", "release", "node-001", *k)
    assert released.stderr == "node/node-001 holds nothing of nvsentinel\n"
