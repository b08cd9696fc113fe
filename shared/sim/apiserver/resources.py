"""The resource table: which kinds the emulator serves, and how each one behaves.

Everything that differs between kinds is a field of :class:`Resource` (scope, subresources,
selectable fields, whether status survives a create, whether ``metadata.generation`` is kept),
so the verbs in :mod:`shared.sim.apiserver.api` never branch on a kind's name for these. Custom resources
become rows of the same table when their CRD is created (:func:`from_crd`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from shared.sim.apiserver import crdcheck, structural
from shared.sim.apiserver.structural import StructuralSchema

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

# Fields every kind can be selected by (the real server's generic set).
_META_FIELDS = ("metadata.name", "metadata.namespace")


@dataclass(frozen=True)
class PrinterColumn:
    """One ``kubectl get`` column: a CRD's additionalPrinterColumns entry, or a built-in's."""

    name: str
    type: str
    json_path: str
    priority: int = 0
    description: str = ""


@dataclass(frozen=True)
class Resource:
    """One served resource (a group/version/plural) and the rules the server applies to it."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: frozenset[str] = frozenset({"status"})
    fields: tuple[str, ...] = ()  # selectable fields beyond metadata.name/namespace
    categories: tuple[str, ...] = ()
    keep_status_on_create: bool = False  # nodes register with a status; most kinds start empty
    generation: bool = False  # kinds whose spec changes bump metadata.generation
    strategic: bool = True  # custom resources refuse strategic-merge patches
    unconditional_update: bool = True  # custom resources require resourceVersion on PUT
    crd: str = ""  # name of the CRD serving it, "" for built-ins
    columns: tuple[PrinterColumn, ...] = ()
    storage_version: str = ""  # for kinds served at several versions: where objects live
    verbs: tuple[str, ...] = ALL_VERBS  # what discovery lists; reviews are create-only
    schema: StructuralSchema | None = field(default=None, compare=False, hash=False)  # a CR version's schema

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def group_resource(self) -> tuple[str, str]:
        """The storage identity: every version of a group/plural shares one set of objects."""
        return (self.group, self.plural)

    def selectable(self) -> tuple[str, ...]:
        return _META_FIELDS + self.fields

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The URL of the collection or of one object."""
        base = f"/api/{self.version}" if not self.group else f"/apis/{self.group}/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name else base


_STATUS = frozenset({"status"})
_NONE: frozenset[str] = frozenset()
_ALL = ("all",)


def _review(group: str, plural: str, kind: str, *, namespaced: bool = False) -> Resource:
    """An access review: create-only, never stored (answered by :mod:`shared.sim.apiserver.reviews`)."""
    return Resource(group, "v1", plural, kind, namespaced, (), _NONE, verbs=("create",))


_POD_FIELDS = (
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)
_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)

BUILTINS: tuple[Resource, ...] = (
    Resource(
        "", "v1", "namespaces", "Namespace", False, ("ns",), frozenset({"status", "finalize"}), fields=("status.phase",)
    ),
    Resource("", "v1", "nodes", "Node", False, ("no",), fields=("spec.unschedulable",), keep_status_on_create=True),
    Resource(
        "",
        "v1",
        "pods",
        "Pod",
        True,
        ("po",),
        frozenset({"status", "log", "eviction", "binding"}),
        fields=_POD_FIELDS,
        categories=("all",),
    ),
    Resource("", "v1", "configmaps", "ConfigMap", True, ("cm",), _NONE),
    Resource("", "v1", "secrets", "Secret", True, (), _NONE, fields=("type",)),
    Resource("", "v1", "events", "Event", True, ("ev",), _NONE, fields=_EVENT_FIELDS),
    # Same stored objects as core/v1 events (see shared/sim/apiserver/eventsv1.py).
    Resource(
        "events.k8s.io",
        "v1",
        "events",
        "Event",
        True,
        ("ev",),
        _NONE,
        fields=(
            *(f"regarding.{f.split('.', 1)[1]}" for f in _EVENT_FIELDS if f.startswith("involvedObject.")),
            "reason",
            "reportingController",
            "type",
        ),
    ),
    Resource("", "v1", "services", "Service", True, ("svc",), categories=("all",)),
    Resource("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",), frozenset({"token"})),
    Resource(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        True,
        ("deploy",),
        frozenset({"status", "scale"}),
        generation=True,
        categories=_ALL,
    ),
    Resource("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",), generation=True, categories=_ALL),
    Resource("apps", "v1", "controllerrevisions", "ControllerRevision", True, (), _NONE),
    Resource(
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        True,
        ("sts",),
        frozenset({"status", "scale"}),
        generation=True,
        categories=_ALL,
    ),
    Resource(
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        True,
        ("rs",),
        frozenset({"status", "scale"}),
        fields=("status.replicas",),
        generation=True,
        categories=_ALL,
    ),
    Resource("batch", "v1", "jobs", "Job", True, (), fields=("status.successful",), generation=True, categories=_ALL),
    Resource("batch", "v1", "cronjobs", "CronJob", True, ("cj",), generation=True, categories=_ALL),
    Resource("", "v1", "resourcequotas", "ResourceQuota", True, ("quota",)),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",), _NONE, generation=True),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", True, (), _NONE),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), generation=True),
    Resource("rbac.authorization.k8s.io", "v1", "roles", "Role", True, (), _NONE),
    Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False, (), _NONE),
    Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True, (), _NONE),
    Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False, (), _NONE),
    _review("authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview"),
    _review("authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview"),
    _review("authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview"),
    _review("authorization.k8s.io", "localsubjectaccessreviews", "LocalSubjectAccessReview", namespaced=True),
    _review("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview"),
    _review("authentication.k8s.io", "tokenreviews", "TokenReview"),
    # autoscaling/v2 first: discovery's preferred version. Both versions share the stored objects
    # (kept in the v2 shape), converted on the way in and out (shared/sim/apiserver/hpaversions.py).
    Resource(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        True,
        ("hpa",),
        categories=_ALL,
        storage_version="v2",
    ),
    Resource(
        "autoscaling",
        "v1",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        True,
        ("hpa",),
        categories=_ALL,
        storage_version="v2",
    ),
    # Dynamic resource allocation, GA in 1.34 (k8s.io/kubernetes pkg/registry/resource/*/strategy.go:
    # DeviceClass and ResourceSlice count generations, ResourceClaim has a status subresource).
    Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False, (), _NONE, generation=True),
    Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, ()),
    Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True, (), _NONE),
    Resource(
        "resource.k8s.io",
        "v1",
        "resourceslices",
        "ResourceSlice",
        False,
        (),
        _NONE,
        fields=("spec.nodeName", "spec.driver"),
        generation=True,
    ),
    Resource(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        ("crd", "crds"),
        generation=True,
    ),
)

# Subresources that answer with another kind, as discovery reports them.
SUBRESOURCE_KINDS: dict[str, tuple[str, str, str]] = {
    "eviction": ("policy", "v1", "Eviction"),
    "binding": ("", "v1", "Binding"),
    "scale": ("autoscaling", "v1", "Scale"),
    "token": ("authentication.k8s.io", "v1", "TokenRequest"),
}
SUBRESOURCE_VERBS: dict[str, tuple[str, ...]] = {
    "status": ("get", "patch", "update"),
    "scale": ("get", "patch", "update"),
    "finalize": ("update",),
    "log": ("get",),
    "eviction": ("create",),
    "binding": ("create",),
    "token": ("create",),
}


def _crd_schema(crd: dict[str, Any], index: int) -> StructuralSchema | None:
    """Version ``index``'s compiled schema; None without one, or for a CRD the server would refuse
    (the CRD create path refuses those with ``structural.crd_errors`` before they get here)."""
    spec = crd.get("spec") or {}
    version = (spec.get("versions") or [])[index]
    schema = (version.get("schema") or {}).get("openAPIV3Schema")
    if not isinstance(schema, dict):
        return None
    subresources = version.get("subresources")
    try:
        return structural.StructuralSchema.compile(
            schema,
            path=crdcheck.schema_path(crd, index),
            status_enabled=isinstance(subresources, dict) and "status" in subresources,
            preserve_unknown_fields=spec.get("preserveUnknownFields") is True,
        )
    except structural.SchemaError:
        return None


def from_crd(crd: dict[str, Any]) -> list[Resource]:
    """The rows a CustomResourceDefinition adds: one per served version, each with its compiled schema."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    every = list(enumerate(spec.get("versions") or []))
    versions = [(i, v) for i, v in every if v.get("served", True)]
    storage = next((v["name"] for _, v in every if v.get("storage")), versions[0][1]["name"] if versions else "")
    rows = []
    for index, version in versions:
        columns = tuple(
            PrinterColumn(
                name=c.get("name", ""),
                type=c.get("type", "string"),
                json_path=c.get("jsonPath", ""),
                priority=int(c.get("priority", 0)),
                description=c.get("description", ""),
            )
            for c in version.get("additionalPrinterColumns") or []
        )
        selectable = tuple(f.get("jsonPath", "").lstrip(".") for f in version.get("selectableFields") or [])
        rows.append(
            Resource(
                group=spec.get("group", ""),
                version=version["name"],
                plural=names.get("plural", ""),
                kind=names.get("kind", ""),
                namespaced=spec.get("scope") == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                subresources=_STATUS if "status" in (version.get("subresources") or {}) else _NONE,
                fields=selectable,
                categories=tuple(names.get("categories") or ()),
                generation=True,
                strategic=False,
                unconditional_update=False,
                crd=(crd.get("metadata") or {}).get("name", ""),
                columns=columns,
                storage_version=storage,
                schema=_crd_schema(crd, index),
            )
        )
    return rows


@dataclass
class ResourceTable:
    """The live table: built-ins plus whatever CRDs registered. Thread-safe."""

    _rows: dict[tuple[str, str, str], Resource] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    revision: int = 0  # bumped on every change, so discovery caches know when to rebuild

    @classmethod
    def with_builtins(cls) -> ResourceTable:
        table = cls()
        for row in BUILTINS:
            table._rows[(row.group, row.version, row.plural)] = row
        return table

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        return self._rows.get((group, version, plural))

    def by_group_resource(self, group: str, plural: str) -> Resource | None:
        """Any served version of a group/plural (the storage version when it is served)."""
        found = [r for (g, _, p), r in self._rows.items() if g == group and p == plural]
        for row in found:
            if not row.storage_version or row.version == row.storage_version:
                return row
        return found[0] if found else None

    def by_kind(self, group: str, kind: str) -> Resource | None:
        for (g, _, _), row in self._rows.items():
            if g == group and row.kind == kind:
                return row
        return None

    def register_crd(self, crd: dict[str, Any]) -> None:
        """Serve (or re-serve, after an update) the versions a CRD declares."""
        name = (crd.get("metadata") or {}).get("name", "")
        with self._lock:
            self._rows = {k: r for k, r in self._rows.items() if r.crd != name}
            for row in from_crd(crd):
                self._rows[(row.group, row.version, row.plural)] = row
            self.revision += 1

    def unregister_crd(self, name: str) -> None:
        with self._lock:
            self._rows = {k: r for k, r in self._rows.items() if r.crd != name}
            self.revision += 1

    def reset(self) -> None:
        with self._lock:
            self._rows = {k: r for k, r in self._rows.items() if not r.crd}
            self.revision += 1

    def __iter__(self) -> Iterator[Resource]:
        return iter(list(self._rows.values()))
