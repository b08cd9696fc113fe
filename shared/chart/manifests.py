"""The chart rendered to Kubernetes objects: what ``nvsentinel manifests`` and ``nvcrectl manifests`` print.

The chart (``shared/chart/files``, also reachable as ``deploy/helm/dsx-cluster-tools``) is the one
source of the objects, RBAC rules included; this module renders it with :mod:`shared.chart.template`
the way ``helm template`` does: ``.Values`` as Helm computes them (:mod:`shared.chart.values`),
every file under ``templates/`` in path order, each rendered file split into documents as Helm
splits it, the documents ordered the way Helm installs them (its kind order, then file and
document order), each parsed as YAML. :func:`documents` keeps the text, which equals ``helm
template``'s byte for byte; the programs print the objects, selected by program: every object
carries ``app.kubernetes.io/component``, and a program takes the components named after it.

It leaves out what Helm adds at install time (release Secrets, ``helm.sh/chart`` labels) and hooks
(the chart has none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from shared import errors, yamlio
from shared.chart import template
from shared.chart import values as chart_values

CHART_NAME = "dsx-cluster-tools"
COMPONENT_LABEL = "app.kubernetes.io/component"
NAME_LABEL = "app.kubernetes.io/name"
PROGRAMS = {"nvsentinel": "nvsentinel-", "nvcrectl": "nvcre-"}
"""Program → prefix of the components it renders."""

# Helm's install order (pkg/release/util/kind_sorter.go); kinds not listed go last, by name.
INSTALL_ORDER = (
    "PriorityClass",
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
    # helm 4 only; helm 3 sorts these two with the kinds it does not list.
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
)
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


@dataclass(frozen=True)
class Request:
    """What to render: user values files, ``--set`` and ``--set-string`` expressions, the release."""

    values_files: tuple[Path, ...] = ()
    set_values: tuple[str, ...] = ()
    namespace: str = "nvsentinel"
    release: str = CHART_NAME
    set_string_values: tuple[str, ...] = ()


def chart_dir() -> Traversable:
    """The chart's files, shipped inside the package so an installed wheel can render them."""
    return resources.files("shared.chart").joinpath("files")


def chart_metadata(root: Traversable | None = None) -> dict[str, Any]:
    data = yamlio.loads((root or chart_dir()).joinpath("Chart.yaml").read_text(encoding="utf-8"), source="Chart.yaml")
    if not isinstance(data, dict):
        raise errors.Internal("Chart.yaml is not a mapping", where="Chart.yaml")
    return data


def default_values(root: Traversable | None = None) -> dict[str, Any]:
    """The chart's ``values.yaml`` as Helm holds it (numbers are floats, see :mod:`shared.chart.values`)."""
    return chart_values.chart_defaults(root or chart_dir())


def values_for(request: Request, root: Traversable | None = None) -> dict[str, Any]:
    """``.Values`` for ``request``: values files, every ``--set``, every ``--set-string``, over the chart's."""
    return chart_values.for_render(
        root or chart_dir(),
        chart_name=CHART_NAME,
        files=request.values_files,
        sets=request.set_values,
        set_strings=request.set_string_values,
    )


# ------------------------------------------------------------------ rendering
@dataclass(frozen=True)
class Document:
    """One document of a rendered template: its text as Helm keeps it, and the object it holds."""

    template: str
    """Path inside the chart, ``templates/x.yaml``."""
    text: str
    obj: dict[str, Any] | None
    """None for a document with no object (only comments)."""

    @property
    def kind(self) -> str:
        return str((self.obj or {}).get("kind") or "")


def _template_files(root: Traversable) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []

    def walk(folder: Traversable, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith((".yaml", ".yml")) and not entry.name.startswith("_"):
                found.append((f"{prefix}{entry.name}", entry.read_text(encoding="utf-8")))

    walk(root.joinpath("templates"), "templates/")
    # Helm sorts the rendered files by path (pkg/release/util/manifest_sorter.go).
    return sorted(found, key=lambda item: item[0].encode("utf-8"))


# Go's unicode.IsSpace, which strings.TrimSpace strips.
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
# pkg/release/util/manifest.go: documents are split on "---" at the start of a line (RE2's \s).
_SEPARATOR = re.compile(r"(?:^|[\t\n\f\r ]*\n)---[\t\n\f\r ]*")


def split_documents(text: str) -> list[str]:
    """helm's ``SplitManifests``: the documents of a rendered file, each trimmed; none for blank text."""
    if text.strip(_GO_SPACE) == "":
        return []
    return [part.strip(_GO_SPACE) for part in _SEPARATOR.split(text.strip(_GO_SPACE)) if part != ""]


def documents(request: Request, root: Traversable | None = None) -> list[Document]:
    """Every document of the chart for ``request`` in ``helm template``'s order; errors name template:line."""
    if not _DNS_LABEL.match(request.namespace):
        raise errors.InvalidInput(f"{request.namespace!r} is not a valid namespace name", where="--namespace")
    chart = root or chart_dir()
    meta = chart_metadata(chart)
    context = {
        "Values": values_for(request, chart),
        "Release": {"Name": request.release, "Namespace": request.namespace},
        "Chart": {"Name": meta.get("name"), "Version": meta.get("version"), "AppVersion": meta.get("appVersion")},
    }
    found: list[Document] = []
    for name, text in _template_files(chart):
        parsed = template.parse(text, name=name)
        # Helm's engine removes Go's "<no value>" from every rendered file, wherever it comes from.
        rendered = template.render(parsed, context).replace("<no value>", "")
        for part in split_documents(rendered):
            # Helm writes each document followed by a newline; a block scalar at the end keeps it.
            obj = yamlio.loads(part + "\n", source=f"{name} (rendered)")
            if obj is not None and (not isinstance(obj, dict) or "kind" not in obj):
                raise errors.InvalidInput("a rendered document is not a Kubernetes object", where=name)
            found.append(Document(template=name, text=part, obj=obj))
    # A stable sort: same-kind documents keep file and document order, as Helm's does.
    return sorted(found, key=lambda doc: _install_rank(doc.kind))


def _install_rank(kind: str) -> tuple[int, str]:
    if kind in INSTALL_ORDER:
        return INSTALL_ORDER.index(kind), ""
    # Kinds Helm does not list come last, by kind name.
    return len(INSTALL_ORDER), kind


def render(request: Request, root: Traversable | None = None) -> list[dict[str, Any]]:
    """Every object of the chart for ``request``, in Helm's install order; errors name the template:line."""
    return [doc.obj for doc in documents(request, root) if doc.obj is not None]


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
    program: str,
    *,
    values_files: list[Path] | None,
    set_values: list[str] | None,
    namespace: str,
    fmt: str,
    set_string_values: list[str] | None = None,
    create_namespace: bool = True,
) -> str:
    """What ``<program> manifests`` prints; a bad flag is InvalidInput naming it (and the expression).

    ``create_namespace``: the Namespaces come first, so the output applies to a fresh cluster
    (``helm install --create-namespace`` does the same outside the manifest): the release's, then
    any other that an object is placed in (the lifecycle's test providers may name their own)."""
    if fmt not in FORMATS:
        raise errors.InvalidInput(f"must be one of {', '.join(FORMATS)}, got {fmt!r}", where="--output")
    request = Request(
        values_files=tuple(values_files or ()),
        set_values=tuple(set_values or ()),
        set_string_values=tuple(set_string_values or ()),
        namespace=namespace,
    )
    objects = for_program(program, render(request))
    if not create_namespace:
        return document(objects, fmt)
    used = [
        namespace,
        *(str(o["metadata"]["namespace"]) for o in objects if (o.get("metadata") or {}).get("namespace")),
    ]
    namespaces = [namespace_object(program, name) for name in dict.fromkeys(used)]
    return document([*namespaces, *objects], fmt)


def namespace_object(program: str, namespace: str) -> dict[str, Any]:
    """The release's Namespace, labelled as the chart labels what it installs for ``program``."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": namespace,
            "labels": {NAME_LABEL: CHART_NAME, COMPONENT_LABEL: f"{PROGRAMS[program]}namespace"},
        },
    }
