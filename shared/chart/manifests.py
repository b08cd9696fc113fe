"""The chart rendered to Kubernetes objects: what ``nvsentinel manifests`` and ``nvcrectl manifests`` print.

The chart (``shared/chart/files``, also reachable as ``deploy/helm/dsx-cluster-tools``) is the one
source of the objects, RBAC rules included; this module renders it with :mod:`shared.chart.template`
the way ``helm template`` would: chart values, then each ``--values`` file, then each ``--set``
(maps merge key by key, lists are replaced, ``null`` deletes a key), every file under ``templates/``
in name order, each rendered document parsed as YAML. The objects are then ordered the way Helm
installs them (CustomResourceDefinitions and RBAC before workloads) and selected by program: every
object carries ``app.kubernetes.io/component``, and a program takes the components named after it.

It leaves out what Helm adds at install time (release Secrets, ``helm.sh/chart`` labels, hooks).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from shared import errors, yamlio
from shared.chart import template

CHART_NAME = "dsx-cluster-tools"
COMPONENT_LABEL = "app.kubernetes.io/component"
NAME_LABEL = "app.kubernetes.io/name"
PROGRAMS = {"nvsentinel": "nvsentinel-", "nvcrectl": "nvcre-"}
"""Program → prefix of the components it renders."""

# Helm's install order (pkg/release/util/kind_sorter.go); kinds not listed go last, by name.
INSTALL_ORDER = (
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
)
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


@dataclass(frozen=True)
class Request:
    """What to render: user values files, ``--set`` strings, the release namespace and name."""

    values_files: tuple[Path, ...] = ()
    set_values: tuple[str, ...] = ()
    namespace: str = "nvsentinel"
    release: str = CHART_NAME


def chart_dir() -> Traversable:
    """The chart's files, shipped inside the package so an installed wheel can render them."""
    return resources.files("shared.chart").joinpath("files")


def chart_metadata(root: Traversable | None = None) -> dict[str, Any]:
    data = yamlio.loads((root or chart_dir()).joinpath("Chart.yaml").read_text(encoding="utf-8"), source="Chart.yaml")
    if not isinstance(data, dict):
        raise errors.Internal("Chart.yaml is not a mapping", where="Chart.yaml")
    return data


def default_values(root: Traversable | None = None) -> dict[str, Any]:
    data = yamlio.loads((root or chart_dir()).joinpath("values.yaml").read_text(encoding="utf-8"), source="values.yaml")
    return data if isinstance(data, dict) else {}


def merge(base: Any, over: Any) -> Any:
    """Helm's coalescing of user values: maps merge, anything else replaces, ``None`` deletes."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = merge(out.get(key), value)
        return out
    return copy.deepcopy(over)


# ------------------------------------------------------------------ --set
def _split_unescaped(text: str, sep: str) -> list[str]:
    """Split on ``sep`` except where escaped with a backslash or inside ``{…}`` (a --set list)."""
    parts, current, escaped, depth = [], "", False, 0
    for char in text:
        if escaped:
            current += char if char in (sep, "\\") else "\\" + char
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == sep and depth == 0:
            parts.append(current)
            current = ""
        else:
            depth += {"{": 1, "}": -1}.get(char, 0) if sep == "," else 0
            current += char
    parts.append(current + ("\\" if escaped else ""))
    return parts


def _typed(text: str) -> Any:
    """Helm's --set typing: true/false, null, integers; everything else is a string."""
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if re.fullmatch(r"-?(0|[1-9][0-9]*)", text):
        return int(text)
    return text


_KEY = re.compile(r"^([^\[\]]+)((?:\[\d+\])*)$")


def parse_set(expression: str) -> dict[str, Any]:
    """``a.b=1,c[0]=x,d={p,q}`` → nested values, as ``helm --set`` reads them; bad syntax is InvalidInput."""
    result: dict[str, Any] = {}
    for assignment in _split_unescaped(expression, ","):
        key, sep, raw = assignment.partition("=")
        if not sep or not key:
            raise errors.InvalidInput(f"expected KEY=VALUE, got {assignment!r}", where="--set")
        value: Any = (
            ([_typed(v) for v in _split_unescaped(raw[1:-1], ",")] if raw[1:-1] else [])
            if raw.startswith("{") and raw.endswith("}")
            else _typed(raw)
        )
        target: Any = result
        steps = _split_unescaped(key, ".")
        for number, step in enumerate(steps):
            match = _KEY.match(step)
            if match is None:
                raise errors.InvalidInput(f"bad key {key!r}", where="--set")
            name, indexes = match.group(1), [int(i) for i in re.findall(r"\[(\d+)\]", match.group(2))]
            last = number == len(steps) - 1
            target = _assign(target, name, indexes, value if last else None, last, key)
    return result


def _assign(target: Any, name: str, indexes: list[int], value: Any, last: bool, key: str) -> Any:
    if not isinstance(target, dict):
        raise errors.InvalidInput(f"{key!r} sets a key inside a value that is not a map", where="--set")
    if not indexes:
        if last:
            target[name] = value
            return None
        child = target.get(name)
        if not isinstance(child, dict):
            child = target[name] = {}
        return child
    holder: Any = target.setdefault(name, [])
    for depth, index in enumerate(indexes):
        if not isinstance(holder, list):
            raise errors.InvalidInput(f"{key!r} indexes a value that is not a list", where="--set")
        if index > 10_000:
            raise errors.InvalidInput(f"index {index} in {key!r} is too large", where="--set")
        while len(holder) <= index:
            holder.append(None)
        final = depth == len(indexes) - 1
        if final and last:
            holder[index] = value
            return None
        if final:
            if not isinstance(holder[index], dict):
                holder[index] = {}
            return holder[index]
        if not isinstance(holder[index], list):
            holder[index] = []
        holder = holder[index]
    return None


def values_for(request: Request, root: Traversable | None = None) -> dict[str, Any]:
    """Chart defaults ← each values file ← each --set, in order."""
    values = default_values(root)
    for path in request.values_files:
        data = yamlio.load_file(path)
        if data is None:
            continue
        if not isinstance(data, dict):
            raise errors.InvalidInput("a values file must hold a mapping", where=str(path))
        values = merge(values, data)
    for expression in request.set_values:
        values = merge(values, parse_set(expression))
    return values


# ------------------------------------------------------------------ rendering
def _template_files(root: Traversable) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []

    def walk(folder: Traversable, prefix: str) -> None:
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith((".yaml", ".yml")) and not entry.name.startswith("_"):
                found.append((f"{prefix}{entry.name}", entry.read_text(encoding="utf-8")))

    walk(root.joinpath("templates"), "templates/")
    return found


def render(request: Request, root: Traversable | None = None) -> list[dict[str, Any]]:
    """Every object of the chart for ``request``, in Helm's install order; errors name the template:line."""
    if not _DNS_LABEL.match(request.namespace):
        raise errors.InvalidInput(f"{request.namespace!r} is not a valid namespace name", where="--namespace")
    chart = root or chart_dir()
    meta = chart_metadata(chart)
    context = {
        "Values": values_for(request, chart),
        "Release": {"Name": request.release, "Namespace": request.namespace},
        "Chart": {"Name": meta.get("name"), "Version": meta.get("version"), "AppVersion": meta.get("appVersion")},
    }
    objects: list[dict[str, Any]] = []
    for name, text in _template_files(chart):
        parsed = template.parse(text, name=name)
        rendered = template.render(parsed, context)
        for document in yamlio.loads_all(rendered, source=f"{name} (rendered)"):
            if not isinstance(document, dict) or "kind" not in document:
                raise errors.InvalidInput("a rendered document is not a Kubernetes object", where=name)
            objects.append(document)
    return sorted(objects, key=_install_key)


def _install_key(obj: dict[str, Any]) -> tuple[int, str, str, str]:
    kind = str(obj.get("kind"))
    rank = INSTALL_ORDER.index(kind) if kind in INSTALL_ORDER else len(INSTALL_ORDER)
    meta = obj.get("metadata") or {}
    return rank, kind, str(meta.get("namespace") or ""), str(meta.get("name") or "")


def component(obj: dict[str, Any]) -> str:
    return str(((obj.get("metadata") or {}).get("labels") or {}).get(COMPONENT_LABEL, ""))


def for_program(program: str, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects ``program`` owns: its components (its controller, monitors and CRDs)."""
    prefix = PROGRAMS[program]
    return [o for o in objects if component(o).startswith(prefix)]


def document(objects: list[dict[str, Any]], fmt: str) -> str:
    """YAML documents separated by ``---``, or one JSON ``v1 List`` (what ``kubectl apply -f`` reads)."""
    from shared import output

    if fmt == "json":
        return output.to_json({"apiVersion": "v1", "kind": "List", "items": objects})
    return yamlio.dumps_all(objects) if objects else ""


FORMATS = ("yaml", "json")


def for_command(
    program: str, *, values_files: list[Path] | None, set_values: list[str] | None, namespace: str, fmt: str
) -> str:
    """What ``<program> manifests`` prints; a bad flag is InvalidInput naming it."""
    if fmt not in FORMATS:
        raise errors.InvalidInput(f"must be one of {', '.join(FORMATS)}, got {fmt!r}", where="--output")
    request = Request(values_files=tuple(values_files or ()), set_values=tuple(set_values or ()), namespace=namespace)
    return document(for_program(program, render(request)), fmt)
