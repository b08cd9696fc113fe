"""One OpenAPI v3 document per group-version, laid out as kube-apiserver 1.34 lays it out.

Each served resource gets the paths a real server publishes (collection, object, cluster-wide list,
subresources; not the deprecated ``/watch/`` paths), each operation carrying ``x-kubernetes-action``
and ``x-kubernetes-group-version-kind`` and its query parameters inline (``fieldValidation``,
``dryRun``, ``fieldManager`` and ``force`` on PATCH: kubectl and helm look for ``fieldValidation``
there before letting the server validate, research section 7). ``components.schemas`` holds the
built-in schemas (``data/openapi-1.34.json``) the document's operations reach, and for a custom
resource its version's ``openAPIV3Schema`` named by the reversed group (``com.example.v1.Widget``),
with ``metadata`` pointing at ObjectMeta. Serving, hashing and caching are in
:mod:`shared.sim.apiserver.openapi`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from functools import cache
from typing import Any

from shared.sim.apiserver import kinds, resources

_REF = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
STATUS = _META + "Status"
# Referenced by every group-version document, as on a real server.
_ALWAYS = (_META + "APIResourceList", _META + "DeleteOptions", _META + "Patch", STATUS, _META + "WatchEvent")
_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)


def gv_path(group: str, version: str) -> str:
    """The key of a group-version in ``/openapi/v3``: ``api/v1``, ``apis/apps/v1``."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


# ---------------------------------------------------------------- schemas


@cache
def _gvk_index() -> dict[tuple[str, str, str], str]:
    out: dict[tuple[str, str, str], str] = {}
    for name, schema in kinds.definitions()["schemas"].items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            out.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return out


def builtin_name(group: str, version: str, kind: str) -> str | None:
    return _gvk_index().get((group, version, kind))


def custom_name(group: str, version: str, kind: str) -> str:
    """A custom resource's component name: the group reversed, as kube-openapi names Go packages."""
    return ".".join([*reversed(group.split(".")), version, kind])


@cache
def fragment(name: str) -> str:
    """A built-in schema as compact JSON, serialized once for every document that carries it."""
    return json.dumps(kinds.definitions()["schemas"][name], separators=(",", ":"), sort_keys=True)


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(_REF):
                found.add(value[len(_REF) :])
            elif key == "properties" and isinstance(value, dict):
                for sub in value.values():
                    _refs(sub, found)
            else:
                _refs(value, found)
    elif isinstance(node, list):
        for item in node:
            _refs(item, found)


@cache
def _direct_refs(name: str) -> frozenset[str]:
    found: set[str] = set()
    _refs(kinds.definitions()["schemas"][name], found)
    return frozenset(found)


def closure(roots: Iterable[str]) -> list[str]:
    """The built-in schemas ``roots`` reach, themselves included, sorted."""
    todo, seen = list(roots), set[str]()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_direct_refs(name) - seen)
    return sorted(seen)


def custom_schema(group: str, version: str, kind: str, schema: dict[str, Any] | None) -> dict[str, Any]:
    """A CRD version's schema as the CRD OpenAPI builder publishes it (apiextensions-apiserver
    ``pkg/controller/openapi/builder``): apiVersion, kind, metadata as a reference to ObjectMeta,
    and the kind's ``x-kubernetes-group-version-kind``."""
    out: dict[str, Any] = (
        copy.deepcopy(schema) if schema else {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    )
    out.setdefault("type", "object")
    meta = kinds.definitions()["schemas"]["io.k8s.api.core.v1.ConfigMap"]["properties"]
    props: dict[str, Any] = out.setdefault("properties", {})
    props["apiVersion"] = {"description": meta["apiVersion"]["description"], "type": "string"}
    props["kind"] = {"description": meta["kind"]["description"], "type": "string"}
    props["metadata"] = {
        "allOf": [{"$ref": _REF + _META + "ObjectMeta"}],
        "description": meta["metadata"]["description"],
    }
    out["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    return out


def custom_list_schema(group: str, version: str, kind: str) -> dict[str, Any]:
    meta = kinds.definitions()["schemas"]["io.k8s.api.core.v1.ConfigMapList"]["properties"]
    return {
        "description": f"{kind}List is a list of {kind}",
        "properties": {
            "apiVersion": meta["apiVersion"],
            "items": {
                "description": f"List of {kind.lower()}s. More info: https://git.k8s.io/community/contributors/devel/api-conventions.md",
                "items": {"$ref": _REF + custom_name(group, version, kind)},
                "type": "array",
            },
            "kind": meta["kind"],
            "metadata": meta["metadata"],
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": group, "kind": kind + "List", "version": version}],
    }


# ---------------------------------------------------------------- operations


def _query(name: str, description: str, kind: str = "string") -> dict[str, Any]:
    return {"description": description, "in": "query", "name": name, "schema": {"type": kind, "uniqueItems": True}}


_P = {
    "allowWatchBookmarks": _query("allowWatchBookmarks", "Requests BOOKMARK watch events.", "boolean"),
    "continue": _query("continue", "The continue token of a previous paginated list."),
    "dryRun": _query("dryRun", "When present, changes are not persisted. Valid value: All."),
    "fieldManager": _query("fieldManager", "The name of the actor making the change."),
    "fieldSelector": _query("fieldSelector", "Restricts the returned objects by their fields."),
    "fieldValidation": _query(
        "fieldValidation",
        "How the server treats unknown or duplicate fields in the request: Ignore, Warn (the default) or Strict.",
    ),
    "force": _query("force", "Force an apply request: take the fields from their other managers.", "boolean"),
    "gracePeriodSeconds": _query("gracePeriodSeconds", "Seconds before the object is deleted.", "integer"),
    "ignoreStoreReadErrorWithClusterWideAccess": _query(
        "ignoreStoreReadErrorWithClusterWideAccess", "Delete objects that cannot be read from storage.", "boolean"
    ),
    "labelSelector": _query("labelSelector", "Restricts the returned objects by their labels."),
    "limit": _query("limit", "The maximum number of objects to return in one list call.", "integer"),
    "orphanDependents": _query("orphanDependents", "Deprecated: use propagationPolicy.", "boolean"),
    "propagationPolicy": _query("propagationPolicy", "Whether and how dependents are garbage collected."),
    "resourceVersion": _query("resourceVersion", "Constrains which resource versions the request may be served from."),
    "resourceVersionMatch": _query("resourceVersionMatch", "How resourceVersion applies to a list call."),
    "sendInitialEvents": _query("sendInitialEvents", "Start a watch with the current objects.", "boolean"),
    "timeoutSeconds": _query("timeoutSeconds", "Timeout of a list or watch call.", "integer"),
    "watch": _query("watch", "Watch for changes instead of listing.", "boolean"),
}
_LIST = (
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
)
_WRITE = ("dryRun", "fieldManager", "fieldValidation")
_PATCH = (*_WRITE, "force")
_DELETE = (
    "dryRun",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterWideAccess",
    "orphanDependents",
    "propagationPolicy",
)
_DELETE_COLLECTION = tuple(sorted({*_DELETE, *_LIST} - {"allowWatchBookmarks", "watch"}))
_PATH_PARAMS = {
    "name": {
        "description": "name of the object",
        "in": "path",
        "name": "name",
        "required": True,
        "schema": {"type": "string", "uniqueItems": True},
    },
    "namespace": {
        "description": "object name and auth scope, such as for teams and projects",
        "in": "path",
        "name": "namespace",
        "required": True,
        "schema": {"type": "string", "uniqueItems": True},
    },
    "pretty": _query("pretty", "If 'true', then the output is pretty printed."),
}


def _content(ref: str | None) -> dict[str, Any]:
    schema = {"$ref": _REF + ref} if ref else {"type": "string"}
    if ref is None:
        return {"text/plain": {"schema": schema}}
    return {"application/json": {"schema": schema}, "application/yaml": {"schema": schema}}


def _responses(ref: str | None, *codes: str) -> dict[str, Any]:
    words = {"200": "OK", "201": "Created", "202": "Accepted"}
    out: dict[str, Any] = {code: {"content": _content(ref), "description": words[code]} for code in codes}
    out["401"] = {"description": "Unauthorized"}
    return out


# Operations per path: (HTTP method, operationId verb, x-kubernetes-action, description, query
# parameters, request body: "object" | "patch" | None, response codes). "{k}" is the kind.
_Op = tuple[str, str, str, str, tuple[str, ...], str | None, tuple[str, ...]]
_COLLECTION: tuple[_Op, ...] = (
    ("delete", "delete", "deletecollection", "delete collection of {k}", _DELETE_COLLECTION, None, ("200",)),
    ("get", "list", "list", "list or watch objects of kind {k}", _LIST, None, ("200",)),
    ("post", "create", "post", "create a {k}", _WRITE, "object", ("200", "201", "202")),
)
_ITEM: tuple[_Op, ...] = (
    ("delete", "delete", "delete", "delete a {k}", _DELETE, None, ("200", "202")),
    ("get", "read", "get", "read the specified {k}", (), None, ("200",)),
    ("patch", "patch", "patch", "partially update the specified {k}", _PATCH, "patch", ("200", "201")),
    ("put", "replace", "put", "replace the specified {k}", _WRITE, "object", ("200", "201")),
)
# A subresource's verbs (resources.SUBRESOURCE_VERBS) as operations; "{s}" is the subresource.
_SUBRESOURCE: dict[str, _Op] = {
    "create": ("post", "create", "post", "create {s} of a {k}", _WRITE, "object", ("200", "201", "202")),
    "get": ("get", "read", "get", "read {s} of the specified {k}", (), None, ("200",)),
    "patch": ("patch", "patch", "patch", "partially update {s} of the specified {k}", _PATCH, "patch", ("200", "201")),
    "update": ("put", "replace", "put", "replace {s} of the specified {k}", _WRITE, "object", ("200", "201")),
}


class _Builder:
    """The ``paths`` of one group-version document, and the schemas they reference."""

    def __init__(self, group: str, version: str) -> None:
        self.group, self.version = group, version
        self.tag = (group.removesuffix(".k8s.io").replace(".", "_") or "core") + "_" + version
        words = group.removesuffix(".k8s.io").split(".") if group else ["core"]
        self.prefix = "".join(w[:1].upper() + w[1:] for w in words) + version[:1].upper() + version[1:]
        self.paths: dict[str, Any] = {}
        self.roots: set[str] = set(_ALWAYS)

    def item(
        self, ops: Iterable[_Op], *, noun: str, kind: str, sub: str, ref: str | None, gvk: dict[str, str]
    ) -> dict[str, Any]:
        """A path item: each operation with its extensions, parameters, body and responses."""
        out: dict[str, Any] = {}
        for method, verb, action, describe, params, body, codes in ops:
            op: dict[str, Any] = {
                "description": describe.format(k=kind, s=sub),
                "operationId": verb + self.prefix + (f"Collection{noun}" if action == "deletecollection" else noun),
                "parameters": [_P[p] for p in params],
            }
            if body == "object":
                op["requestBody"] = {"content": {"*/*": {"schema": {"$ref": _REF + str(ref)}}}, "required": True}
            elif body == "patch":
                patch = {"schema": {"$ref": _REF + _META + "Patch"}}
                op["requestBody"] = {"content": dict.fromkeys(_PATCH_TYPES, patch), "required": True}
            op["responses"] = _responses(STATUS if action == "deletecollection" else ref, *codes)
            op["tags"] = [self.tag]
            op["x-kubernetes-action"] = action
            op["x-kubernetes-group-version-kind"] = gvk
            out[method] = op
        return out

    def add(self, r: resources.Resource, kind_ref: str, list_ref: str) -> None:
        """Every path of one resource: collection, object, cluster-wide list, subresources."""
        self.roots.update((kind_ref, list_ref))
        gvk = {"group": r.group, "kind": r.kind, "version": r.version}
        base = "/" + gv_path(r.group, r.version)
        ns, scope = ("/namespaces/{namespace}", "Namespaced") if r.namespaced else ("", "")
        namespace = [_PATH_PARAMS["namespace"]] if r.namespaced else []
        pretty, name = _PATH_PARAMS["pretty"], _PATH_PARAMS["name"]
        noun, k = scope + r.kind, r.kind
        collection = self.item(_COLLECTION, noun=noun, kind=k, sub="", ref=kind_ref, gvk=gvk)
        collection["get"]["responses"] = _responses(list_ref, "200")
        self.paths[f"{base}{ns}/{r.plural}"] = {**collection, "parameters": [*namespace, pretty]}
        if r.namespaced:
            every = self.item(_COLLECTION[1:2], noun=f"{k}ForAllNamespaces", kind=k, sub="", ref=list_ref, gvk=gvk)
            self.paths[f"{base}/{r.plural}"] = {**every, "parameters": [pretty]}
        item = self.item(_ITEM, noun=noun, kind=k, sub="", ref=kind_ref, gvk=gvk)
        self.paths[f"{base}{ns}/{r.plural}/{{name}}"] = {**item, "parameters": [name, *namespace, pretty]}
        for sub in sorted(r.subresources):
            ref: str | None = kind_ref
            sub_gvk = gvk
            if sub in resources.SUBRESOURCE_KINDS:
                g, v, sub_kind = resources.SUBRESOURCE_KINDS[sub]
                ref = builtin_name(g, v, sub_kind)
                if ref is None:
                    continue
                sub_gvk = {"group": g, "kind": sub_kind, "version": v}
                self.roots.add(ref)
            verbs = resources.SUBRESOURCE_VERBS.get(sub, ("get",))
            ops = [_SUBRESOURCE[verb] for verb in sorted(verbs) if verb in _SUBRESOURCE]
            if sub == "log":
                ref = None  # plain text
            path_item = self.item(ops, noun=f"{noun}{sub[:1].upper()}{sub[1:]}", kind=k, sub=sub, ref=ref, gvk=sub_gvk)
            self.paths[f"{base}{ns}/{r.plural}/{{name}}/{sub}"] = {
                **path_item,
                "parameters": [name, *namespace, pretty],
            }

    def resources_path(self) -> None:
        """``GET /apis/<g>/<v>/``: the group-version's APIResourceList."""
        self.paths["/" + gv_path(self.group, self.version) + "/"] = {
            "get": {
                "description": "get available resources",
                "operationId": f"get{self.prefix}APIResources",
                "responses": _responses(_META + "APIResourceList", "200"),
                "tags": [self.tag],
            }
        }


def document(
    group: str, version: str, rows: Iterable[resources.Resource], custom: dict[str, dict[str, Any] | None]
) -> str:
    """The JSON text of one group-version document. ``custom`` maps a custom resource's kind to its
    version's ``openAPIV3Schema`` (``None`` when the CRD declares none)."""
    builder = _Builder(group, version)
    builder.resources_path()
    extra: dict[str, Any] = {}
    for r in sorted(rows, key=lambda row: row.plural):
        if r.crd:
            kind_ref, list_ref = (
                custom_name(r.group, r.version, r.kind),
                custom_name(r.group, r.version, r.kind + "List"),
            )
            extra[kind_ref] = custom_schema(r.group, r.version, r.kind, custom.get(r.kind))
            extra[list_ref] = custom_list_schema(r.group, r.version, r.kind)
            builder.add(r, kind_ref, list_ref)
            builder.roots.update((_META + "ObjectMeta", _META + "ListMeta"))
        else:
            kind_ref = builtin_name(r.group, r.version, r.kind) or STATUS
            builder.add(r, kind_ref, builtin_name(r.group, r.version, r.kind + "List") or kind_ref)
    names = closure(builder.roots - set(extra))
    parts = [json.dumps(name) + ":" + fragment(name) for name in names]
    parts += [
        json.dumps(name) + ":" + json.dumps(schema, separators=(",", ":"), sort_keys=True)
        for name, schema in sorted(extra.items())
    ]
    head = {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.34.2"}, "paths": builder.paths}
    text = json.dumps(head, separators=(",", ":"))
    return text[:-1] + ',"components":{"schemas":{' + ",".join(parts) + "}}}"


def non_resource_document(key: str) -> str:
    """The documents of the discovery endpoints: ``api``, ``apis``, ``apis/<group>``, ``version``."""
    if key == "api":
        path, op_id, ref, tag = "/api/", "getCoreAPIVersions", _META + "APIVersions", "core"
    elif key == "apis":
        path, op_id, ref, tag = "/apis/", "getAPIVersions", _META + "APIGroupList", "apis"
    elif key == "version":
        path, op_id, ref, tag = "/version/", "getCodeVersion", "io.k8s.apimachinery.pkg.version.Info", "version"
    elif key.startswith("apis/") and key.count("/") == 1:
        group = key[len("apis/") :]
        words = group.removesuffix(".k8s.io").split(".")
        op_id = "get" + "".join(w[:1].upper() + w[1:] for w in words) + "APIGroup"
        path, ref, tag = f"/apis/{group}/", _META + "APIGroup", group.removesuffix(".k8s.io").replace(".", "_")
    else:
        raise KeyError(key)
    paths = {
        path: {
            "get": {
                "description": "get information",
                "operationId": op_id,
                "responses": _responses(ref, "200"),
                "tags": [tag],
            }
        }
    }
    head = {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.34.2"}, "paths": paths}
    parts = [json.dumps(name) + ":" + fragment(name) for name in closure([ref])]
    return json.dumps(head, separators=(",", ":"))[:-1] + ',"components":{"schemas":{' + ",".join(parts) + "}}}"
