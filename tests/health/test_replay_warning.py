"""``rules replay`` says when it sizes the circuit breaker from the events' own nodes (no ``--nodes``).

Covers: one warning line on stderr without ``--nodes`` (the output on stdout unchanged), none with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shared.health import samples, settings


def test_replay_warns_once_when_no_node_list_sizes_the_breaker(run_cli: Any, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(settings.default_text())
    events = tmp_path / "events.ndjson"
    first, second = samples.EVENT.wire(), {**samples.EVENT.wire(), "nodeName": "other", "id": "b"}
    events.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    guessed = run_cli("nvsentinel", "rules", "replay", "-f", str(values), "--events", str(events))
    assert guessed.code == 0
    assert guessed.stderr == (
        "warning: no --nodes: the circuit breaker counts the 2 node(s) the events name as the cluster's GPU nodes;"
        " give --nodes (kubectl get nodes -o json) to size it as the cluster is\n"
    )
    nodes = tmp_path / "nodes.json"
    nodes.write_text(
        json.dumps(
            {
                "items": [
                    {**samples.NODE, "metadata": {**samples.NODE["metadata"], "name": n}}
                    for n in ("sample-node", "other")
                ]
            }
        )
    )
    given = run_cli("nvsentinel", "rules", "replay", "-f", str(values), "--events", str(events), "--nodes", str(nodes))
    assert (given.code, given.stderr) == (0, "")
    assert given.stdout == guessed.stdout
