"""nvsentinel refuses unusable input files with one stderr line naming the file and exit 2.

Covers: ``monitor dcgm --state`` holding binary data, text that is not UTF-8, or JSON that is not
an object; ``monitor dcgm --file`` missing or a directory; ``monitor xid --file`` not UTF-8;
``events publish`` from JSON nested past the layer's limit, or with an event whose nodeName is not
a DNS-1123 subdomain (``../../x``, empty, upper case, too long, a final newline), both before any
cluster is contacted; a monitor's ``--node`` or ``--node-root`` folder, or ``events list --node``,
that is not a node name.
None prints a traceback or anything on stdout. Below the monitors, publishing a batch with one bad
node name stores nothing in the simulated cluster. A values file whose rule-set taint or
skipNodeLabels key or value breaks Kubernetes' label rules is refused by every command that loads
it (``rules replay`` here), not only by ``rules check``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from shared import files

DCGM = '{"gpus": []}\n'


def _refused(result: Any, path: Path, message: str) -> None:
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == f"error: {path}: {message}\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"re\0ported": {}}', "binary data: NUL byte at offset 4 (line 1)"),
        (b'{\n"reported": "\xc3("}', "not UTF-8 text: byte 0xc3 at offset 15 (line 2)"),
        (b"[]", "monitor state must be a JSON object"),
    ],
    ids=["binary", "not-utf8", "a-list"],
)
def test_monitor_state_that_cannot_be_used_exits_2(run_cli: Any, tmp_path: Path, content: bytes, message: str) -> None:
    state, dcgm = tmp_path / "state.json", tmp_path / "dcgm.json"
    state.write_bytes(content)
    dcgm.write_text(DCGM)
    args = ("--node", "n1", "--file", str(dcgm), "--state", str(state), "--dry-run")
    _refused(run_cli("nvsentinel", "monitor", "dcgm", *args), state, message)


@pytest.mark.parametrize(
    ("make", "message"), [("absent", "file does not exist"), ("folder", "is a directory, expected a file")]
)
def test_a_dcgm_file_that_is_missing_or_a_directory_exits_2(
    run_cli: Any, tmp_path: Path, make: str, message: str
) -> None:
    dcgm = tmp_path / "dcgm.json"
    if make == "folder":
        dcgm.mkdir()
    _refused(run_cli("nvsentinel", "monitor", "dcgm", "--node", "n1", "--file", str(dcgm), "--dry-run"), dcgm, message)


def test_a_kernel_log_that_is_not_utf8_exits_2(run_cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_bytes(b"ok\nNVRM: Xid (PCI:0000:17:00): 79, \xff\n")
    result = run_cli("nvsentinel", "monitor", "xid", "--node", "n1", "--file", str(log), "--dry-run")
    _refused(result, log, "not UTF-8 text: byte 0xff at offset 35 (line 2)")


def test_events_nested_past_the_limit_exit_2_before_any_cluster_is_asked(run_cli: Any, tmp_path: Path) -> None:
    events = tmp_path / "events.json"
    depth = files.MAX_NESTING + 1
    events.write_text("[" * depth + "]" * depth)
    result = run_cli("nvsentinel", "events", "publish", "-f", str(events), "--kubeconfig", str(tmp_path / "none"))
    _refused(result, events, f"JSON nested deeper than {files.MAX_NESTING} levels")


EVENT = {"agent": "syslog-health-monitor", "checkName": "SysLogsXIDError", "isFatal": True, "errorCode": ["79"]}


@pytest.mark.parametrize("node", ["../../x", "", "Node_1", "a" * 254, "gpu-1\n"], ids=repr)
def test_an_event_whose_node_name_is_not_a_node_name_exits_2_before_any_cluster_is_asked(
    run_cli: Any, tmp_path: Path, node: str
) -> None:
    events = tmp_path / "events.ndjson"
    good = {**EVENT, "nodeName": "node-001"}
    events.write_text(json.dumps(good) + "\n" + json.dumps({**EVENT, "nodeName": node}) + "\n")
    result = run_cli("nvsentinel", "events", "publish", "-f", str(events), "--kubeconfig", str(tmp_path / "none"))
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"error: {events}:2: invalid HealthEvent: nodeName: invalid node name {node!r}")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("monitor", ["xid", "dcgm"])
def test_a_monitor_node_flag_that_is_not_a_node_name_exits_2(run_cli: Any, tmp_path: Path, monitor: str) -> None:
    source = tmp_path / "input"
    source.write_text(DCGM if monitor == "dcgm" else "ok\n")
    result = run_cli("nvsentinel", "monitor", monitor, "--node", "../etc", "--file", str(source), "--dry-run")
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith("error: --node: invalid node name '../etc'") and result.stderr.count("\n") == 1


def test_a_node_root_folder_that_is_not_a_node_name_exits_2_naming_it(run_cli: Any, tmp_path: Path) -> None:
    (tmp_path / "node-001").mkdir()
    (tmp_path / "node-001" / "kern.log").write_text("ok\n")
    (tmp_path / "Bad Node").mkdir()
    (tmp_path / "Bad Node" / "kern.log").write_text("ok\n")
    result = run_cli("nvsentinel", "monitor", "xid", "--node-root", str(tmp_path), "--dry-run")
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"error: {tmp_path / 'Bad Node'}: invalid node name 'Bad Node'")


def test_publishing_an_event_for_no_node_stores_nothing(sim: Any, api_client: Any) -> None:
    """The last guard, below every monitor: one bad name in a batch and no object is created."""
    from shared import clock, errors
    from shared.health import event as hevent
    from shared.health import resource
    from shared.kube import crds, rest

    crds.install(api_client, resource.RESOURCE)
    batch = [hevent.parse({**EVENT, "nodeName": name}) for name in ("node-001", "../../x")]
    with pytest.raises(errors.InvalidInput, match=re.escape("invalid node name '../../x'")):
        resource.publish(api_client, batch, now=clock.WALL.now)
    assert rest.list_items(api_client, resource.RESOURCE.path()) == []


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            "  ruleSets:\n    - name: r\n      match: {all: [{kind: HealthEvent, expression: 'event.isFatal'}]}\n"
            "      taint: {key: nvidia.com/gpu-error, value: 'fatal error', effect: NoSchedule}\n",
            "fault-quarantine.ruleSets[0].taint.value: invalid taint value 'fatal error'",
        ),
        ("  skipNodeLabels:\n    - {key: 'bad key', value: 'true'}\n", "fault-quarantine.skipNodeLabels[0].key"),
        ("  skipNodeLabels:\n    - {key: skip, value: 'a;b'}\n", "skipNodeLabels[0].value: invalid label value 'a;b'"),
    ],
    ids=["rule-set-taint-value", "skip-label-key", "skip-label-value"],
)
def test_values_whose_labels_or_taints_the_api_would_refuse_exit_2_on_load(
    run_cli: Any, tmp_path: Path, values: str, message: str
) -> None:
    """Not only ``rules check``: every command that loads the values (here ``rules replay``) refuses them."""
    path, events = tmp_path / "values.yaml", tmp_path / "events.ndjson"
    path.write_text("fault-quarantine:\n" + values)
    events.write_text(json.dumps({**EVENT, "nodeName": "node-001"}) + "\n")
    result = run_cli("nvsentinel", "rules", "replay", "-f", str(path), "--events", str(events))
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"error: {path}: ") and message in result.stderr
    assert result.stderr.count("\n") == 1


def test_listing_events_for_a_name_no_node_can_have_exits_2_before_any_cluster_is_asked(
    run_cli: Any, tmp_path: Path
) -> None:
    result = run_cli("nvsentinel", "events", "list", "--node", "Node_1", "--kubeconfig", str(tmp_path / "none"))
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith("error: --node: invalid node name 'Node_1'") and result.stderr.count("\n") == 1
