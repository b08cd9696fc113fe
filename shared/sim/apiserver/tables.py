"""Server-side printing: the ``Table`` answers that ``kubectl get`` asks for.

kubectl asks for ``as=Table`` and prints whatever columns the server returns, so without this a
``kubectl get nodes`` shows only names and a CRD's additionalPrinterColumns never appear. Built-in
kinds get the familiar columns (node STATUS/ROLES, pod READY/STATUS/NODE, ...); custom resources
get their CRD's columns, evaluated with the small JSONPath subset those columns use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from shared.sim.apiserver import hpaversions, podprint, resources

Row = Callable[[dict[str, Any]], list[Any]]


def age(timestamp: str | None, now: datetime) -> str:
    """``translateTimestampSince`` of an RFC 3339 time: apimachinery's ``HumanDuration`` (``45s``,
    ``3m20s``, ``5h10m``, ``3d4h``), as every built-in printer shows its AGE column."""
    if not timestamp:
        return "<unknown>"
    moment = podprint.timestamp(timestamp)
    return "<invalid>" if moment is None else podprint.since(moment, now)


def _cond(obj: dict[str, Any], kind: str) -> str | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return str(c.get("status"))
    return None


_NODE_COLUMNS = [
    ("Name", "string", 0),
    ("Status", "string", 0),
    ("Roles", "string", 0),
    ("Age", "string", 0),
    ("Version", "string", 0),
    ("Internal-IP", "string", 1),
    ("External-IP", "string", 1),
    ("OS-Image", "string", 1),
    ("Kernel-Version", "string", 1),
    ("Container-Runtime", "string", 1),
]
"""nodeColumnDefinitions (k/k pkg/printers/internalversion): AGE before VERSION, as ``kubectl get nodes`` shows."""


def _node(obj: dict[str, Any], now: datetime) -> list[Any]:
    """``printNode``: the Ready condition (the last one listed), SchedulingDisabled, the roles from
    ``node-role.kubernetes.io/<role>`` keys and the ``kubernetes.io/role`` value."""
    status = obj.get("status") or {}
    conditions = {c.get("type"): c for c in status.get("conditions") or []}
    ready = conditions.get("Ready")
    shown = ["Unknown" if ready is None else "Ready" if ready.get("status") == "True" else "NotReady"]
    if (obj.get("spec") or {}).get("unschedulable"):
        shown.append("SchedulingDisabled")
    roles = set()
    for key, value in (obj["metadata"].get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and len(key) > len("node-role.kubernetes.io/"):
            roles.add(key.split("/", 1)[1])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    info = status.get("nodeInfo") or {}
    addresses = status.get("addresses") or []

    def address(kind: str) -> str:
        return next((str(a.get("address")) for a in addresses if a.get("type") == kind), "<none>")

    return [
        obj["metadata"]["name"],
        ",".join(shown),
        ",".join(sorted(roles)) or "<none>",
        age(obj["metadata"].get("creationTimestamp"), now),
        info.get("kubeletVersion", ""),
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _replicated(obj: dict[str, Any]) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
    ]


def _daemonset(obj: dict[str, Any]) -> list[Any]:
    status = obj.get("status") or {}
    return [
        status.get(k, 0)
        for k in (
            "desiredNumberScheduled",
            "currentNumberScheduled",
            "numberReady",
            "updatedNumberScheduled",
            "numberAvailable",
        )
    ]


def _job(obj: dict[str, Any]) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    done = (
        "Complete" if _cond(obj, "Complete") == "True" else ("Failed" if _cond(obj, "Failed") == "True" else "Running")
    )
    return [done, f"{status.get('succeeded', 0)}/{spec.get('completions', 1)}"]


def _lease(obj: dict[str, Any]) -> list[Any]:
    return [(obj.get("spec") or {}).get("holderIdentity") or "<none>"]


def _pdb(obj: dict[str, Any]) -> list[Any]:
    spec = obj.get("spec") or {}
    return [
        spec.get("minAvailable", "N/A"),
        spec.get("maxUnavailable", "N/A"),
        (obj.get("status") or {}).get("disruptionsAllowed", 0),
    ]


def _configmap(obj: dict[str, Any]) -> list[Any]:
    return [len(obj.get("data") or {}) + len(obj.get("binaryData") or {})]


def _namespace(obj: dict[str, Any]) -> list[Any]:
    return [(obj.get("status") or {}).get("phase", "")]


def _replicaset(obj: dict[str, Any]) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [spec.get("replicas", 0), status.get("replicas", 0), status.get("readyReplicas", 0)]


def _statefulset(obj: dict[str, Any]) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}"]


def _revision(obj: dict[str, Any]) -> list[Any]:
    owner = next((o for o in obj["metadata"].get("ownerReferences") or [] if o.get("controller")), None)
    group = str((owner or {}).get("apiVersion", "")).split("/")[0] if owner else ""
    shown = f"{owner['kind'].lower()}.{group}/{owner['name']}" if owner else "<none>"
    return [shown, obj.get("revision", 0)]


def _service(obj: dict[str, Any]) -> list[Any]:
    spec = obj.get("spec") or {}
    ports = ",".join(
        f"{p.get('port')}{':' + str(p['nodePort']) if p.get('nodePort') else ''}/{p.get('protocol', 'TCP')}"
        for p in spec.get("ports") or []
    )
    external = ",".join(spec.get("externalIPs") or []) or "<none>"
    return [spec.get("type", "ClusterIP"), spec.get("clusterIP") or "<none>", external, ports or "<none>"]


def _secret(obj: dict[str, Any]) -> list[Any]:
    return [obj.get("type", ""), len(obj.get("data") or {})]


def _cronjob(obj: dict[str, Any]) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        spec.get("schedule", ""),
        spec.get("timeZone") or "<none>",
        "True" if spec.get("suspend") else "False",
        len(status.get("active") or []),
        status.get("lastScheduleTime") or "<none>",
    ]


def _priorityclass(obj: dict[str, Any]) -> list[Any]:
    return [obj.get("value", 0), "true" if obj.get("globalDefault") else "false"]


def _event_time(obj: dict[str, Any]) -> str | None:
    series = obj.get("series") or {}
    stamp = series.get("lastObservedTime") or obj.get("lastTimestamp") or obj.get("eventTime")
    return str(stamp)[:19] + "Z" if stamp else None


def _event(obj: dict[str, Any], now: datetime) -> list[Any]:
    """kubectl's event columns (k/k pkg/printers/internalversion ``printEvent``)."""
    involved = obj.get("involvedObject") or {}
    source = obj.get("source") or {}
    count = int((obj.get("series") or {}).get("count") or obj.get("count") or 1)
    first = obj.get("firstTimestamp") or obj.get("eventTime")
    return [
        age(_event_time(obj), now),
        obj.get("type", ""),
        obj.get("reason", ""),
        f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
        involved.get("fieldPath", ""),
        ", ".join(v for v in (source.get("component") or obj.get("reportingComponent"), source.get("host")) if v),
        str(obj.get("message", "")).strip(),
        age(str(first)[:19] + "Z" if first else None, now),
        count,
        obj["metadata"]["name"],
    ]


def _hpa_target(spec: dict[str, Any], status: dict[str, Any] | None) -> str:
    """One metric of the TARGETS column: ``cpu: 40%/80%``, ``<unknown>/500m (avg)``."""
    kind = spec.get("type")
    status = status or {}
    if kind in ("Resource", "ContainerResource"):
        key = "resource" if kind == "Resource" else "containerResource"
        source, current = spec.get(key) or {}, (status.get(key) or {}).get("current") or {}
        target = source.get("target") or {}
        if target.get("averageValue") is not None:
            now = str(current.get("averageValue", "<unknown>")) if status.get(key) else "<unknown>"
            return f"{source.get('name', '')}: {now}/{target['averageValue']}"
        now = f"{current['averageUtilization']}%" if current.get("averageUtilization") is not None else "<unknown>"
        goal = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None else "<auto>"
        return f"{source.get('name', '')}: {now}/{goal}"
    if kind == "Pods":
        current = (status.get("pods") or {}).get("current") or {}
        goal = ((spec.get("pods") or {}).get("target") or {}).get("averageValue", "0")
        return f"{current.get('averageValue', '<unknown>') if status.get('pods') else '<unknown>'}/{goal}"
    if kind in ("Object", "External"):
        key = kind.lower()
        target = (spec.get(key) or {}).get("target") or {}
        current = (status.get(key) or {}).get("current") or {}
        if target.get("averageValue") is not None:
            average = current.get("averageValue")
            return f"{'<unknown>' if average is None else average}/{target['averageValue']} (avg)"
        now = current.get("value", "<unknown>") if status.get(key) else "<unknown>"
        return f"{now}/{target.get('value', '0')}"
    return "<unknown type>"


def _hpa(obj: dict[str, Any]) -> list[Any]:
    """kubectl's HPA row (``printHorizontalPodAutoscaler``), from the v2 shape whatever version was asked."""
    if str(obj.get("apiVersion", "")) == f"{hpaversions.GROUP}/v1":
        obj = hpaversions.to_v2(obj)
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    specs, statuses = spec.get("metrics") or [], status.get("currentMetrics") or []
    shown = [_hpa_target(m, statuses[i] if i < len(statuses) else None) for i, m in enumerate(specs)]
    targets = ", ".join(shown[:2]) + (f" + {len(shown) - 2} more..." if len(shown) > 2 else "") if shown else "<none>"
    low = spec.get("minReplicas")
    return [
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        targets,
        "<unset>" if low is None else str(low),
        int(spec.get("maxReplicas") or 0),
        int(status.get("currentReplicas") or 0),
    ]


def _claim_state(obj: dict[str, Any]) -> list[Any]:
    """``resourceClaimState``: deleted, pending, allocated, reserved."""
    status = obj.get("status") or {}
    deleted = bool(obj["metadata"].get("deletionTimestamp"))
    states = ["deleted"] if deleted else []
    if not status.get("allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return [",".join(states)]


def _slice(obj: dict[str, Any]) -> list[Any]:
    spec = obj.get("spec") or {}
    return [spec.get("nodeName", ""), spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")]


_EVENT_COLUMNS = [
    ("Last Seen", "string", 0),
    ("Type", "string", 0),
    ("Reason", "string", 0),
    ("Object", "string", 0),
    ("Subobject", "string", 1),
    ("Source", "string", 1),
    ("Message", "string", 0),
    ("First Seen", "string", 1),
    ("Count", "string", 1),
    ("Name", "string", 1),
]

_BUILTIN: dict[str, tuple[list[tuple[str, str, int]], Row]] = {
    "ReplicaSet": ([("Desired", "integer", 0), ("Current", "integer", 0), ("Ready", "integer", 0)], _replicaset),
    "StatefulSet": ([("Ready", "string", 0)], _statefulset),
    "ControllerRevision": ([("Controller", "string", 0), ("Revision", "integer", 0)], _revision),
    "Service": (
        [("Type", "string", 0), ("Cluster-IP", "string", 0), ("External-IP", "string", 0), ("Port(s)", "string", 0)],
        _service,
    ),
    "Secret": ([("Type", "string", 0), ("Data", "integer", 0)], _secret),
    "CronJob": (
        [
            ("Schedule", "string", 0),
            ("Timezone", "string", 0),
            ("Suspend", "boolean", 0),
            ("Active", "integer", 0),
            ("Last Schedule", "string", 0),
        ],
        _cronjob,
    ),
    "PriorityClass": ([("Value", "integer", 0), ("Global-Default", "boolean", 0)], _priorityclass),
    "Deployment": ([("Ready", "string", 0), ("Up-to-date", "integer", 0), ("Available", "integer", 0)], _replicated),
    "DaemonSet": (
        [
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
        ],
        _daemonset,
    ),
    "Job": ([("Status", "string", 0), ("Completions", "string", 0)], _job),
    "Lease": ([("Holder", "string", 0)], _lease),
    "PodDisruptionBudget": (
        [("Min Available", "string", 0), ("Max Unavailable", "string", 0), ("Allowed Disruptions", "integer", 0)],
        _pdb,
    ),
    "ConfigMap": ([("Data", "integer", 0)], _configmap),
    "HorizontalPodAutoscaler": (
        [
            ("Reference", "string", 0),
            ("Targets", "string", 0),
            ("MinPods", "string", 0),
            ("MaxPods", "integer", 0),
            ("Replicas", "integer", 0),
        ],
        _hpa,
    ),
    "ResourceClaim": ([("State", "string", 0)], _claim_state),
    "ResourceSlice": ([("Node", "string", 0), ("Driver", "string", 0), ("Pool", "string", 0)], _slice),
    "Namespace": ([("Status", "string", 0)], _namespace),
}

_FILTER = re.compile(r"\[\?\(@\.([\w.]+)\s*==\s*[\"']([^\"']*)[\"']\)\]")


def _step(value: Any, token: str) -> list[Any]:
    """What one JSONPath token selects from ``value``."""
    if token == "[*]":
        return list(value) if isinstance(value, list) else []
    if token.startswith("[?"):
        m = _FILTER.fullmatch(token)
        if m and isinstance(value, list):
            return [v for v in value if str(json_path(v, "." + m[1]) or "") == m[2]]
        return []
    if token.startswith("[") and ":" in token:
        start, _, stop = token[1:-1].partition(":")
        return (
            list(value[int(start) if start else None : int(stop) if stop else None]) if isinstance(value, list) else []
        )
    if token.startswith("["):
        index = int(token[1:-1])
        return [value[index]] if isinstance(value, list) and -len(value) <= index < len(value) else []
    return [value[token]] if isinstance(value, dict) and token in value else []


def json_path(obj: Any, path: str) -> Any:
    """Evaluate ``.a.b[0].c``, ``.a[*].b``, ``.a[-1:].b`` (slices, negative indexes) and
    ``.a[?(@.k=="v")].b`` (printer-column JSONPath, as client-go's jsonpath reads them)."""
    path = path.strip().removeprefix("{").removesuffix("}").lstrip("$")
    tokens = re.findall(
        r"\[\?\(@\.[\w.]+\s*==\s*[\"'][^\"']*[\"']\)\]|\[\*\]|\[-?\d*:-?\d*\]|\[-?\d+\]|[^.\[\]]+", path
    )
    current: list[Any] = [obj]
    for token in tokens:
        current = [found for value in current for found in _step(value, token)]
    if not current:
        return None
    return current[0] if len(current) == 1 else ",".join(str(v) for v in current)


def _custom(columns: tuple[resources.PrinterColumn, ...], obj: dict[str, Any], now: datetime) -> list[Any]:
    cells = []
    for column in columns:
        value = json_path(obj, column.json_path)
        if column.type == "date" and isinstance(value, str):
            value = age(value, now)
        cells.append("<none>" if value is None else value)
    return cells


def table(
    r: resources.Resource,
    objects: list[dict[str, Any]],
    *,
    now: datetime,
    include_object: str,
    list_meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``meta.k8s.io/v1`` Table of ``objects``."""
    if r.kind == "Event" and not r.crd:
        return _table(
            _EVENT_COLUMNS, [(obj, _event(obj, now)) for obj in objects], include_object=include_object, meta=list_meta
        )
    if r.kind == "Node" and not r.crd:
        return _table(
            _NODE_COLUMNS, [(obj, _node(obj, now)) for obj in objects], include_object=include_object, meta=list_meta
        )
    if r.kind == "Pod" and not r.crd:
        printed = [(obj, podprint.printed(obj)) for obj in objects]
        return pod_table(printed, now=now, include_object=include_object, list_meta=list_meta)
    if r.crd:
        extra = [(c.name, c.type, c.priority) for c in r.columns]
        has_age = any(c.name.lower() == "age" for c in r.columns)
        if not has_age:
            extra.append(("Age", "date", 0))
    else:
        base, _ = _BUILTIN.get(r.kind, ([], lambda _o: []))
        extra = [*base, ("Age", "date", 0)]
        has_age = False
    rows = []
    for obj in objects:
        if r.crd:
            cells = _custom(r.columns, obj, now)
        else:
            cells = _BUILTIN.get(r.kind, ([], lambda _o: []))[1](obj)
        if not has_age:
            cells.append(age(obj["metadata"].get("creationTimestamp"), now))
        rows.append((obj, [obj["metadata"]["name"], *cells]))
    return _table([("Name", "string", 0), *extra], rows, include_object=include_object, meta=list_meta)


def pod_table(
    rows: Sequence[tuple[dict[str, Any] | None, podprint.Printed]],
    *,
    now: datetime,
    include_object: str,
    list_meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A Table of pods already printed (``podprint.printed``, kept with each stored pod); the object
    may be None where ``include_object`` is ``None``, so a list need not decode the pods."""
    return _table(
        podprint.COLUMNS,
        [(obj, podprint.cells(p, now)) for obj, p in rows],
        include_object=include_object,
        meta=list_meta,
        conditions=[p.conditions for _, p in rows],
    )


def _table(
    columns: list[tuple[str, str, int]],
    rows: Sequence[tuple[dict[str, Any] | None, list[Any]]],
    *,
    include_object: str,
    meta: dict[str, Any] | None,
    conditions: list[list[dict[str, str]] | None] | None = None,
) -> dict[str, Any]:
    """A Table whose columns are all given (kinds whose Name column is not the first)."""
    definitions = [
        {
            "name": n,
            "type": t,
            "format": "name" if n == "Name" else "",
            "priority": p,
            "description": "Name must be unique within a namespace." if n == "Name" else "",
        }
        for n, t, p in columns
    ]
    out = []
    for index, (obj, cells) in enumerate(rows):
        row: dict[str, Any] = {"cells": cells}
        if conditions and conditions[index]:
            row["conditions"] = conditions[index]
        if include_object == "None" or obj is None:
            pass
        elif include_object == "Object":
            row["object"] = obj
        else:
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj["metadata"],
            }
        out.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta or {},
        "columnDefinitions": definitions,
        "rows": out,
    }
