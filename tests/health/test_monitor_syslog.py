"""The syslog health monitor (shared/health/monitors/syslog.py) and how ``monitor xid`` prints it.

Covers: a single read of a kernel log hands all its Xid events to ``emit`` in one batch, in line
order, and publishes nothing on a dry run; every ``DIR/<node>/kern.log`` of a node root is read,
each under its node; flags that do not go together are refused naming the flag (``--interval``
without ``--follow``, ``--journal`` with ``--node-root``, the export format or stdin with
``--journal --follow``, an unknown ``--format``); ``-o table``
prints one row per Xid with its code; ``-o json`` prints NDJSON; an unknown ``-o`` is refused
before anything is read or published.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared import errors
from shared.health.monitors import syslog

LOG = (
    "[Fri Apr  5 21:29:01 2024] NVRM: Xid (PCI:0000:a1:00): 79, pid=12, name=python, gone.\n"
    "[Fri Apr  5 21:29:02 2024] unrelated line\n"
    "[Fri Apr  5 21:29:03 2024] NVRM: Xid (PCI:0000:a1:00): 48, pid=12, name=python, ecc.\n"
)


class _Cluster:
    kubeconfig = Path("/nonexistent/kubeconfig")
    context = None


def test_a_single_read_emits_every_xid_once_in_line_order_and_a_dry_run_publishes_nothing(tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_text(LOG, encoding="utf-8")
    batches: list[list[Any]] = []
    request = syslog.XidRequest(file=str(log), node="n1", dry_run=True)
    events = syslog.run(request, cluster=_Cluster(), emit=batches.append)
    assert [e.errorCode for e in events] == [["79"], ["48"]]
    assert batches == [events] and {e.nodeName for e in events} == {"n1"}


def test_a_node_root_reads_each_nodes_kernel_log(tmp_path: Path) -> None:
    for node in ("b", "a"):
        (tmp_path / node).mkdir()
        (tmp_path / node / "kern.log").write_text(LOG, encoding="utf-8")
    request = syslog.XidRequest(node_root=tmp_path, dry_run=True)
    events = syslog.run(request, cluster=_Cluster(), emit=lambda batch: None)
    assert [e.nodeName for e in events] == ["a", "a", "b", "b"]


@pytest.mark.parametrize(
    ("request_fields", "where"),
    [
        ({"file": "k.log", "node": "n", "interval": "1s"}, "--follow"),
        ({"journal": True, "node_root": Path("nodes")}, "--node-root"),
        ({"input_format": "journal-export", "follow": True, "file": "j"}, "--format"),
        ({"journal": True, "follow": True, "file": "-"}, "--file"),
        ({"input_format": "xml"}, "--format"),
    ],
    ids=[
        "interval-without-follow",
        "journal-with-node-root",
        "export-format-with-follow",
        "journal-follow-from-stdin",
        "unknown-input-format",
    ],
)
def test_flags_that_do_not_go_together_are_refused_naming_the_flag(request_fields: dict[str, Any], where: str) -> None:
    with pytest.raises(errors.InvalidInput) as refused:
        syslog.run(syslog.XidRequest(dry_run=True, **request_fields), cluster=_Cluster(), emit=lambda batch: None)
    assert refused.value.where == where


def test_monitor_xid_prints_a_row_per_xid_or_ndjson(run_cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_text(LOG, encoding="utf-8")
    args = ("nvsentinel", "monitor", "xid", "--file", str(log), "--node", "n1", "--dry-run")
    table = run_cli(*args, "-o", "table").stdout.splitlines()
    assert table[0].split() == ["NODE", "XID", "ACTION", "MESSAGE"]
    assert [row.split()[:2] for row in table[1:]] == [["n1", "79"], ["n1", "48"]]
    lines = run_cli(*args).stdout.splitlines()
    assert [json.loads(line)["errorCode"] for line in lines] == [["79"], ["48"]]


def test_an_unknown_output_format_is_refused_before_anything_is_read(run_cli: Any, tmp_path: Path) -> None:
    missing = tmp_path / "missing.log"
    refused = run_cli("nvsentinel", "monitor", "xid", "--file", str(missing), "--node", "n1", "-o", "xml")
    assert refused.code == 2
    assert refused.stderr == (
        "error: --output: unknown output format 'xml', valid formats are: yaml, json, table, wide\n"
    )
