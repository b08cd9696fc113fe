"""``dcgmi diag -r N [-j]`` output for one node, computed from its faults.

Text follows the DCGM 3.x table of reference/samples/dcgm (sections Metadata, Deployment,
Integration, Hardware, Stress; ``Pass``, ``Fail - All``, ``Skip - All``; ``Warning``/``Info``
rows wrapped at 46 characters). A test that passes on some GPUs and fails on others prints one
result row per verdict, ``Pass - GPUs: 0, 1, 2`` then ``Fail - GPU: 3``. JSON follows DCGM 4
(``DCGM Diagnostic`` → ``test_categories`` → tests → per-GPU results), valid against NVIDIA's
schema in the same folder. What fails: a dead GPU every GPU test of the level; an active fatal
Xid the memory test (level ≥ 2); a throttling GPU the targeted power test (level ≥ 3).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from shared.sim.gpu import fabric, stages

# (category, JSON name, text name, minimum level, per GPU)
TESTS = (
    ("Deployment", "software", "Denylist", 1, False),
    ("Deployment", "software", "NVML Library", 1, True),
    ("Deployment", "software", "CUDA Main Library", 1, False),
    ("Deployment", "software", "Permissions and OS Blocks", 1, False),
    ("Deployment", "software", "Persistence Mode", 1, False),
    ("Deployment", "software", "Environment Variables", 1, False),
    ("Deployment", "software", "Page Retirement/Row Remap", 1, False),
    ("Deployment", "software", "Graphics Processes", 1, False),
    ("Deployment", "software", "Inforom", 1, False),
    ("Integration", "pcie", "PCIe", 2, True),
    ("Hardware", "memory", "GPU Memory", 2, True),
    ("Hardware", "diagnostic", "Diagnostic", 3, True),
    ("Stress", "targeted_stress", "Targeted Stress", 3, True),
    ("Stress", "targeted_power", "Targeted Power", 3, True),
    ("Stress", "memory_bandwidth", "Memory Bandwidth", 3, True),
    ("Stress", "eud", "EUD Test", 4, True),
)
_LEFT, _RIGHT, _CHUNK = 25, 46, 45
_RULE = f"+{'-' * (_LEFT + 2)}+{'-' * (_RIGHT + 2)}+"


@dataclass
class Verdict:
    """One test on one node: failing GPUs with their message (empty: passed everywhere)."""

    failures: dict[int, tuple[int, str]] = field(default_factory=dict)  # gpu -> (DCGM error id, message)


def verdicts(model: fabric.Fabric, node: fabric.Node, level: int) -> dict[str, Verdict]:
    """Per text test name, what the node's faults make it report."""
    effects = stages.faults()
    found: dict[str, Verdict] = {}
    dead = model.dead_gpus(node.name)
    fatal = [(gpu, code) for gpu, code in model.xids(node.name) if code in effects.fatalXids]
    hot = model.hot_gpus(node.name)
    for _, _, name, minimum, per_gpu in TESTS:
        if minimum > level:
            continue
        verdict = Verdict()
        if per_gpu:
            for gpu in dead:
                verdict.failures[gpu] = (
                    81,
                    f"GPU {gpu} is not reachable: it has fallen off the bus. "
                    "Reset GPU. Reboot the node if the reset fails.",
                )
        if name == "GPU Memory":
            for gpu, code in fatal:
                verdict.failures.setdefault(gpu, (43, f"GPU {gpu} Detected XID {code} for GPU {gpu}"))
        if name == "Targeted Power":
            for gpu in hot:
                verdict.failures.setdefault(
                    gpu, (77, f"GPU {gpu} Thermal violations totaling 12.5 seconds for GPU {gpu}")
                )
        found[name] = verdict
    return found


def failed(results: dict[str, Verdict]) -> bool:
    return any(v.failures for v in results.values())


def _row(left: str, right: str) -> list[str]:
    # DCGM cuts long text every 45 characters, mid-word, and pads the cell by one space.
    chunks = [right[i : i + _CHUNK] for i in range(0, len(right), _CHUNK)] or [""]
    rows = [f"| {left:<{_LEFT}} | {chunks[0]:<{_RIGHT}} |"]
    rows += [f"| {'':<{_LEFT}} | {chunk:<{_RIGHT}} |" for chunk in chunks[1:]]
    return rows


def _section(name: str, *, first: bool) -> str:
    left = f"-----  {name}  ".ljust(_LEFT + 2, "-")
    edge = "|" if first else "+"
    return f"{edge}{left}+{'-' * (_RIGHT + 2)}{edge}"


def text(node: fabric.Node, level: int, results: dict[str, Verdict]) -> str:
    gpus = list(range(node.profile.gpu.count))
    lines = [
        "Successfully ran diagnostic for group.",
        _RULE,
        f"| {'Diagnostic':<{_LEFT}} | {'Result':<{_RIGHT}} |",
        _RULE.replace("-", "="),
        _section("Metadata", first=True),
    ]
    lines += _row("DCGM Version", stages.workloads().dcgm.version)
    lines += _row("Driver Version Detected", node.driver)
    lines += _row("GPU Device IDs Detected", ",".join([node.profile.gpu.deviceId] * len(gpus)))
    category = ""
    for cat, _, name, minimum, per_gpu in TESTS:
        if minimum > level:
            continue
        if cat != category:
            lines.append(_section(cat, first=cat == "Deployment"))
            category = cat
        verdict = results[name]
        bad = sorted(verdict.failures)
        good = [g for g in gpus if g not in verdict.failures]
        if not per_gpu:
            lines += _row(name, "Fail" if bad else "Pass")
        elif not bad:
            lines += _row(name, "Pass - All")
        elif not good:
            lines += _row(name, "Fail - All")
        else:
            plural = "GPUs" if len(good) > 1 else "GPU"
            lines += _row(name, f"Pass - {plural}: {', '.join(map(str, good))}")
            plural = "GPUs" if len(bad) > 1 else "GPU"
            lines += _row("", f"Fail - {plural}: {', '.join(map(str, bad))}")
        for gpu in bad:
            lines += _row("Warning", verdict.failures[gpu][1])
    lines.append(_RULE)
    return "\n".join(lines) + "\n"


def json_text(node: fabric.Node, level: int, results: dict[str, Verdict]) -> str:
    gpus = list(range(node.profile.gpu.count))
    categories: dict[str, dict[str, list[Verdict]]] = {}
    for cat, json_name, name, minimum, _ in TESTS:
        if minimum <= level:
            categories.setdefault(cat, {}).setdefault(json_name, []).append(results[name])
    out = []
    for cat, tests in categories.items():
        entries = []
        for json_name, parts in tests.items():
            per_gpu = []
            for gpu in gpus:
                reasons = [p.failures[gpu] for p in parts if gpu in p.failures]
                result: dict[str, object] = {
                    "entity_group": "GPU",
                    "entity_group_id": 1,
                    "entity_id": gpu,
                    "status": "Fail" if reasons else "Pass",
                }
                if reasons:
                    result["warnings"] = [
                        {"error_category": 6, "error_id": code, "error_severity": 1, "warning": message}
                        for code, message in reasons
                    ]
                per_gpu.append(result)
            summary = "Fail" if any(r["status"] == "Fail" for r in per_gpu) else "Pass"
            entries.append({"name": json_name, "results": per_gpu, "test_summary": {"status": summary}})
        out.append({"category": cat, "tests": entries})
    document = {
        "DCGM Diagnostic": {"test_categories": out},
        "entity_groups": [
            {
                "entity_group": "GPU",
                "entity_group_id": 1,
                "entities": [
                    {
                        "device_id": node.profile.gpu.deviceId,
                        "entity_id": g,
                        "serial_num": f"1650{node.index:05d}{g:03d}",
                    }
                    for g in gpus
                ],
            }
        ],
        "metadata": {"Driver Version Detected": node.driver, "version": stages.workloads().dcgm.version},
    }
    return json.dumps(document, indent=4) + "\n"


def crash_text() -> str:
    return (
        "Error: Unable to complete diagnostic for group 0. Return: (-15) Host engine connection invalid/disconnected.\n"
    )
