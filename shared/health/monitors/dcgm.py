"""``dcgmi health -c -j`` and ``dcgmi diag -j`` documents → unhealthy HealthEvents per GPU and check.

Health (upstream's gpu-health-monitor, research §8.1): one event per (watch, GPU) with an
incident; agent ``gpu-health-monitor``, componentClass GPU, checkName ``Gpu<Watch>Watch`` from the
watch (``PCIe system`` → ``GpuPcieWatch``), entity ``{GPU, <index>}``, errorCode the incidents'
``DCGM_FR_*`` codes, recommendedAction from upstream's ``dcgmerrorsmapping.csv`` (its old
vocabulary translated with the Xid monitor's bucket rule; ``DCGM_FR_XID_ERROR`` looks the Xid in
the message up in the catalogue). isFatal: upstream takes it from a per-watch table whose default
was not found; we take the watch's category (thermal, power and NVSwitch non-fatal are NonFatal)
**and** DCGM's own level — a ``Warning`` is never fatal, a ``Failure`` on a fatal watch is.

Diag (DCGM 4 ``DCGM Diagnostic`` shape, also DCGM 3's ``DCGM GPU Diagnostic``): one event per
(test, GPU) whose status is Fail or Warn, agent ``preflight-dcgm-diag`` (upstream's preflight
agents are ``preflight-*``; its default rule set quarantines their fatal events), checkName
``DcgmDiag<Test>``; Fail is fatal. A Deployment (software) failure asks for CONTACT_SUPPORT, a
hardware test's for RUN_FIELDDIAG. errorCode carries DCGM's numeric ``error_id``s.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from shared import errors
from shared.health import event as hevent
from shared.health import xid

AGENT, COMPONENT, DIAG_AGENT = "gpu-health-monitor", "GPU", "preflight-dcgm-diag"
A = hevent.RecommendedAction
# upstream's dcgmerrorsmapping.csv (old vocabulary) → our actions; unknown codes → CONTACT_SUPPORT
ACTIONS: dict[str, hevent.RecommendedAction] = {
    "DCGM_FR_VOLATILE_DBE_DETECTED": A.COMPONENT_RESET,
    "DCGM_FR_CORRUPT_INFOROM": A.COMPONENT_RESET,
    "DCGM_FR_PENDING_ROW_REMAP": A.COMPONENT_RESET,
    "DCGM_FR_NVLINK_DOWN": A.RESTART_BM,
    "DCGM_FR_UNCONTAINED_ERROR": A.RESTART_BM,
    "DCGM_FR_GPU_LOST": A.RESTART_BM,
    "DCGM_FR_FAULTY_MEMORY": A.RUN_FIELDDIAG,
    "DCGM_FR_ROW_REMAP_FAILURE": A.RUN_FIELDDIAG,
    "DCGM_FR_CLOCK_THROTTLE_POWER": A.NONE,
    "DCGM_FR_XID_ERROR": A.NONE,
    "DCGM_FR_THERMAL_VIOLATIONS": A.CONTACT_SUPPORT,
    "DCGM_FR_NVSWITCH_NVLINK_DOWN": A.CONTACT_SUPPORT,
    "DCGM_FR_PCI_REPLAY_RATE": A.CONTACT_SUPPORT,
}
# watch (dcgmi's system name, lower case, without " system") → (checkName, fatal category)
WATCHES: dict[str, tuple[str, bool]] = {
    "pcie": ("GpuPcieWatch", True),
    "nvlink": ("GpuNvlinkWatch", True),
    "memory": ("GpuMemWatch", True),
    "mem": ("GpuMemWatch", True),
    "inforom": ("GpuInforomWatch", True),
    "sm": ("GpuSmWatch", True),
    "mcu": ("GpuMcuWatch", True),
    "pmu": ("GpuPmuWatch", True),
    "driver": ("GpuDriverWatch", True),
    "cpuset": ("GpuCpusetWatch", True),
    "nvswitch fatal": ("GpuNvswitchFatalWatch", True),
    "thermal": ("GpuThermalWatch", False),
    "power": ("GpuPowerWatch", False),
    "nvswitch non-fatal": ("GpuNvswitchNonfatalWatch", False),
}
_GPU_ID = re.compile(r"GPU ID:\s*(\d+)")
_XID = re.compile(r"XID (\d+)", re.IGNORECASE)
_ORDER = {
    A.NONE: 0,
    A.CONTACT_SUPPORT: 1,
    A.RUN_FIELDDIAG: 2,
    A.COMPONENT_RESET: 3,
    A.RESTART_VM: 4,
    A.RESTART_BM: 5,
    A.REPLACE_VM: 6,
}


def kind(doc: Any) -> str:
    """``health`` or ``diag``, from the document's top-level keys."""
    if isinstance(doc, dict) and isinstance(doc.get("body"), dict):
        return "health"
    if isinstance(doc, dict) and ("DCGM Diagnostic" in doc or "DCGM GPU Diagnostic" in doc):
        return "diag"
    raise errors.InvalidInput("not a `dcgmi health -c -j` or `dcgmi diag -j` document")


def events(doc: Any, *, node: str, now: datetime) -> list[hevent.HealthEvent]:
    """Unhealthy events of either document kind."""
    return health_events(doc, node=node, now=now) if kind(doc) == "health" else diag_events(doc, node=node, now=now)


def action_for(code: str, message: str) -> hevent.RecommendedAction:
    if code == "DCGM_FR_XID_ERROR" and (m := _XID.search(message)):
        return xid.action_for(int(m[1]))[0]
    return ACTIONS.get(code, A.CONTACT_SUPPORT) if code else A.CONTACT_SUPPORT


def _watch(system: str) -> tuple[str, bool]:
    name = system.lower().removesuffix(" system").strip()
    if name in WATCHES:
        return WATCHES[name]
    camel = "".join(part.capitalize() for part in re.split(r"[^a-z0-9]+", name) if part)
    return f"Gpu{camel}Watch", True


def _incidents(system: Any) -> Iterator[tuple[str, str, str]]:
    """(level, code, message) of a watch: ``children`` maps a level to one incident or a list."""
    children = system.get("children", {}) if isinstance(system, dict) else {}
    for level, found in children.items():
        for item in found if isinstance(found, list) else [found]:
            if isinstance(item, dict):
                yield level, str(item.get("error_code", "") or ""), str(item.get("value", "") or "")


def health_events(doc: dict[str, Any], *, node: str, now: datetime) -> list[hevent.HealthEvent]:
    gpus = ((doc.get("body") or {}).get("GPU") or {}).get("children") or {}
    out = []
    for label, gpu in gpus.items():
        m = _GPU_ID.search(label)
        index = m[1] if m else label
        for system, content in sorted(((gpu or {}).get("children") or {}).items()):
            if system == "Overall Health":
                continue
            found = [i for i in _incidents(content) if i[0] in ("Failure", "Warning")]
            if not found:
                continue
            check, fatal_watch = _watch(system)
            codes = sorted({code for _, code, _ in found if code})
            actions = [action_for(code, msg) for _, code, msg in found]
            action = max(actions, key=lambda a: _ORDER.get(a, 1))
            failure = any(level == "Failure" for level, _, _ in found)
            out.append(
                hevent.HealthEvent(
                    agent=AGENT,
                    componentClass=COMPONENT,
                    checkName=check,
                    isFatal=fatal_watch and failure,
                    isHealthy=False,
                    message="; ".join(msg for _, _, msg in found),
                    recommendedAction=action,
                    errorCode=codes,
                    entitiesImpacted=[hevent.Entity(entityType="GPU", entityValue=str(index))],
                    metadata={"level": "Failure" if failure else "Warning", "watch": system},
                    generatedTimestamp=now,
                    nodeName=node,
                )
            )
    return out


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[^A-Za-z0-9]+", name) if p)


def diag_events(doc: dict[str, Any], *, node: str, now: datetime) -> list[hevent.HealthEvent]:
    body = doc.get("DCGM Diagnostic") or doc.get("DCGM GPU Diagnostic") or {}
    version = str((doc.get("metadata") or {}).get("version", ""))
    out = []
    for category in body.get("test_categories") or []:
        hardware = str(category.get("category", "")) not in ("Deployment", "Software")
        for test in category.get("tests") or []:
            name = str(test.get("name", "test"))
            for result in test.get("results") or []:
                status = str(result.get("status", ""))
                if status not in ("Fail", "Warn"):
                    continue
                gpu = result.get("entity_id", result.get("gpu_id", result.get("gpu_ids", "")))
                notes = result.get("warnings") or []
                text = "; ".join(str(w.get("warning", "")) for w in notes if isinstance(w, dict))
                codes = sorted({str(w["error_id"]) for w in notes if isinstance(w, dict) and "error_id" in w})
                fatal = status == "Fail"
                action = (A.RUN_FIELDDIAG if hardware else A.CONTACT_SUPPORT) if fatal else A.NONE
                metadata = {"test": name, "status": status, "category": str(category.get("category", ""))}
                if version:
                    metadata["dcgmVersion"] = version
                out.append(
                    hevent.HealthEvent(
                        agent=DIAG_AGENT,
                        componentClass=COMPONENT,
                        checkName=f"DcgmDiag{_camel(name)}",
                        isFatal=fatal,
                        isHealthy=False,
                        message=text or f"{name}: {status}",
                        recommendedAction=action,
                        errorCode=codes,
                        metadata=metadata,
                        generatedTimestamp=now,
                        entitiesImpacted=[hevent.Entity(entityType="GPU", entityValue=str(gpu))],
                        nodeName=node,
                    )
                )
    return out
