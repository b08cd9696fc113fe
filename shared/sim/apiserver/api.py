"""The API verbs over the store: create, get, list, update, patch, delete, with their semantics.

This is where the emulator earns "faithful": optimistic concurrency (a stale resourceVersion or a
failed precondition is 409), server-owned metadata (uid, creationTimestamp, generation), status
kept to the status subresource and spec kept off it, no-op writes that change nothing, finalizers
and deletionTimestamp, ``dryRun=All`` that validates everything and stores nothing, and the size
limits. HTTP concerns (URLs, headers, content types) stay in :mod:`shared.sim.apiserver.handler`.
"""

from __future__ import annotations

import base64
import builtins
import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared.sim.apiserver import (
    admission,
    apierrors,
    collector,
    defaults,
    managedfields,
    patches,
    readviews,
    resources,
    selectors,
    store,
)
from shared.sim.apiserver.apierrors import ApiError

_SERVER_OWNED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_GENERATE_PREFIX = 58  # 63 - 5 random characters

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE, STRATEGIC, APPLY)


@dataclass(frozen=True)
class ListResult:
    items: list[store.Entry]
    resource_version: int
    continue_token: str
    remaining: int


def rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class Api:
    """The verbs. Each one is atomic under the store lock; none returns stored (shared) data."""

    views: readviews.Views = readviews.STORED
    """How objects read where that differs from the stored bytes (the server sets its own)."""

    def __init__(
        self, *, objects: store.Store, table: resources.ResourceTable, clock: Callable[[], datetime], rng: random.Random
    ) -> None:
        self.store = objects
        self.table = table
        self.clock = clock
        self.rng = rng
        self.collector = collector.Collector(objects=objects, table=table, now=self.now)

    def now(self) -> str:
        return rfc3339(self.clock())

    def new_uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    # ------------------------------------------------------------ reads
    def entry(self, r: resources.Resource, ns: str | None, name: str) -> store.Entry:
        found = self.store.get(r.group_resource, (ns or "") if r.namespaced else "", name)
        if found is None:
            raise apierrors.not_found(r.plural, r.group, name)
        return found

    def get(self, r: resources.Resource, ns: str | None, name: str) -> dict[str, Any]:
        return self.as_version(r, self.entry(r, ns, name).object())

    def as_version(self, r: resources.Resource, obj: dict[str, Any]) -> dict[str, Any]:
        """Serve a custom resource at the version it was asked for (schemas are not converted),
        and any object as a read shows it (:mod:`shared.sim.apiserver.readviews`)."""
        obj["apiVersion"] = r.group_version
        return self.views.object(r, obj)

    def list(
        self,
        r: resources.Resource,
        ns: str | None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = 0,
        continue_token: str | None = None,
    ) -> ListResult:
        """Matching entries in key order; ``limit`` and ``continue`` page through them."""
        try:
            labels = selectors.parse_labels(label_selector)
            fields = selectors.parse_fields(field_selector, r)
        except selectors.SelectorError as exc:
            raise apierrors.bad_request(str(exc)) from exc
        after = None
        if continue_token:
            after, token_rv = _decode_continue(continue_token)
            if token_rv < self.store.compacted:
                raise apierrors.gone(
                    "The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter."
                )
        with self.store.lock:
            rv = self.store.resource_version
            scan = self.store.scan(r.group_resource, ns if r.namespaced else None, after)
            items: list[store.Entry] = []
            remaining = 0
            for entry in scan:
                if (labels and not selectors.match_labels(labels, entry.labels)) or (
                    fields and not selectors.match_fields(fields, entry.fields)
                ):
                    continue
                if limit and len(items) >= limit:
                    remaining += 1
                    continue
                items.append(entry)
        token = ""
        if limit and remaining:
            token = _encode_continue((items[-1].namespace, items[-1].name), rv)
        return ListResult(items, rv, token, remaining)

    # ------------------------------------------------------------ create
    def create(
        self,
        r: resources.Resource,
        ns: str | None,
        body: Any,
        *,
        dry_run: bool = False,
        options: admission.WriteOptions | None = None,
        operation: admission.Operation = "create",
    ) -> dict[str, Any]:
        options = options or admission.WriteOptions()
        obj = _object_body(body)
        admission.decode(r, obj, options=options, operation=operation)
        if operation == "apply":
            obj = managedfields.apply(
                None,
                self._applied(r, obj, None),
                manager=options.manager,
                api_version=r.group_version,
                now=self.now(),
                force=options.force,
                list_types=_list_types(r),
            )
        else:
            obj.get("metadata", {}).pop("managedFields", None)
        md = obj["metadata"]
        if r.namespaced:
            if md.get("namespace") and ns and md["namespace"] != ns:
                raise apierrors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            md["namespace"] = ns or md.get("namespace") or "default"
        else:
            md.pop("namespace", None)
        if md.get("resourceVersion"):
            raise apierrors.bad_request("resourceVersion should not be set on objects to be created")
        if not md.get("name") and md.get("generateName"):
            # apiserver names.SimpleNameGenerator: the prefix is cut to leave room for 5 characters.
            md["name"] = md["generateName"][:_GENERATE_PREFIX] + "".join(
                self.rng.choice(_NAME_ALPHABET) for _ in range(5)
            )
        if not md.get("name"):
            raise apierrors.invalid(r.kind, "", [("metadata.name", "Required value: name or generateName is required")])
        with self.store.lock:
            if r.namespaced:
                self._check_namespace_open(md["namespace"])
            for key in _SERVER_OWNED:
                md.pop(key, None)
            obj["apiVersion"] = self._storage_version(r)
            obj["kind"] = r.kind
            md["uid"] = self.new_uid()
            md["creationTimestamp"] = self.now()
            if r.generation:
                md["generation"] = 1
            defaults.on_create(r, obj, self.now(), priorities=self._priorities(r, obj))
            self._validate(r, obj, old=None)
            # Storage answers AlreadyExists only for a valid object (validation runs first).
            if self.store.get(r.group_resource, md.get("namespace", ""), md["name"]) is not None:
                raise apierrors.already_exists(r.plural, r.group, md["name"])
            if options.manager and operation != "apply":
                managedfields.record_update(
                    None,
                    obj,
                    manager=options.manager,
                    api_version=r.group_version,
                    now=self.now(),
                    list_types=_list_types(r),
                )
            if dry_run:
                return self.as_version(r, obj)
            self.store.put(r, obj)
            if r.kind == "CustomResourceDefinition":
                self.table.register_crd(obj)
            if r.kind == "Namespace":
                self._create_default_service_account(md["name"])
            return self.as_version(r, obj)

    def _priorities(self, r: resources.Resource, obj: dict[str, Any]) -> dict[str, tuple[int, str]]:
        """The PriorityClass a new pod names, for Priority admission (only looked up when named)."""
        name = (obj.get("spec") or {}).get("priorityClassName") if r.kind == "Pod" and not r.group else None
        found = self.store.get(("scheduling.k8s.io", "priorityclasses"), "", name) if name else None
        if found is None:
            return {}
        pc = found.object()
        return {str(name): (int(pc.get("value", 0)), str(pc.get("preemptionPolicy") or "PreemptLowerPriority"))}

    def _storage_version(self, r: resources.Resource) -> str:
        if r.storage_version:
            return f"{r.group}/{r.storage_version}"
        return r.group_version

    def _check_namespace_open(self, ns: str) -> None:
        entry = self.store.get(("", "namespaces"), "", ns)
        if entry is None:
            raise apierrors.not_found("namespaces", "", ns)
        if entry.object()["metadata"].get("deletionTimestamp"):
            raise ApiError(
                403, "Forbidden", f"unable to create new content in namespace {ns} because it is being terminated"
            )

    def _create_default_service_account(self, ns: str) -> None:
        sa = self.table.lookup("", "v1", "serviceaccounts")
        if sa is not None and self.store.get(sa.group_resource, ns, "default") is None:
            self.create(sa, ns, {"metadata": {"name": "default"}})

    def _validate(
        self, r: resources.Resource, obj: dict[str, Any], *, old: dict[str, Any] | None, status_only: bool = False
    ) -> None:
        """``status_only``: a ``/status`` write, where the real status strategies judge the status
        (and metadata) alone — the rest is the stored object, already valid."""
        defaults.on_write(r, obj)
        admission.validate(r, obj, old=old)
        defaults.check_metadata(r, obj)
        if not status_only:
            defaults.check_spec(r, obj, old)
        defaults.check_size(r, obj, len(store.encode(obj)))

    # ------------------------------------------------------------ update and patch
    def update(
        self,
        r: resources.Resource,
        ns: str | None,
        name: str,
        body: Any,
        *,
        sub: str | None = None,
        dry_run: bool = False,
        options: admission.WriteOptions | None = None,
    ) -> dict[str, Any]:
        new = _object_body(body)
        admission.decode(r, new, options=options or admission.WriteOptions(), operation="update")
        if new["metadata"].get("name", name) != name:
            raise apierrors.bad_request(
                f"the name of the object ({new['metadata']['name']}) does not match the name on the URL ({name})"
            )
        with self.store.lock:
            current = self.entry(r, ns, name)
            wanted = new["metadata"].get("resourceVersion")
            if wanted and wanted != str(current.rv):
                raise apierrors.conflict(r.plural, r.group, name)
            if not wanted and not r.unconditional_update:
                raise apierrors.invalid(
                    r.kind, name, [("metadata.resourceVersion", "Invalid value: 0x0: must be specified for an update")]
                )
            return self._commit(r, current.object(), new, sub=sub, dry_run=dry_run, options=options)

    def patch(
        self,
        r: resources.Resource,
        ns: str | None,
        name: str,
        content_type: str,
        body: Any,
        *,
        sub: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        options: admission.WriteOptions | None = None,
    ) -> dict[str, Any]:
        options = options or admission.WriteOptions()
        if content_type not in PATCH_TYPES:
            raise ApiError(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format - "
                f"accepted media types include: {', '.join(PATCH_TYPES)}",
            )
        if content_type == STRATEGIC and not r.strategic:
            raise ApiError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - "
                f"accepted media types include: {JSON_PATCH}, {MERGE}, {APPLY}",
            )
        if content_type == APPLY and not field_manager:
            raise apierrors.bad_request("PATCH: fieldManager must be set for apply")
        with self.store.lock:
            found = self.store.get(r.group_resource, (ns or "") if r.namespaced else "", name)
            if found is None:
                if content_type == APPLY and sub is None:
                    return self.create(r, ns, body, dry_run=dry_run, options=options, operation="apply")
                raise apierrors.not_found(r.plural, r.group, name)
            current = found.object()
            if content_type == APPLY and isinstance(body, dict):
                admission.decode(r, body, options=options, operation="apply")
            try:
                if content_type == JSON_PATCH:
                    patched = patches.json_patch(current, body)
                elif content_type == MERGE:
                    patched = patches.merge_patch(current, body)
                elif content_type == STRATEGIC:
                    patched = patches.strategic_merge(current, body)
                else:
                    patched = managedfields.apply(
                        current,
                        self._applied(r, body, sub),
                        manager=options.manager or field_manager or "",
                        api_version=r.group_version,
                        now=self.now(),
                        force=options.force,
                        list_types=_list_types(r),
                        subresource=sub or "",
                    )
            except patches.PatchError as exc:
                raise ApiError(422, "Invalid", str(exc)) from exc
            if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
                raise ApiError(422, "Invalid", "the patch must leave an object with metadata")
            if content_type != APPLY:
                admission.decode(r, patched, options=options, operation="patch", patched=True)
            if patched["metadata"].get("resourceVersion") != str(found.rv):
                raise apierrors.conflict(r.plural, r.group, name)
            if patched["metadata"].get("name") != name:
                raise apierrors.bad_request(f"the name of the object does not match the name on the URL ({name})")
            return self._commit(
                r, current, patched, sub=sub, dry_run=dry_run, options=options, applied=content_type == APPLY
            )

    def _applied(self, r: resources.Resource, config: Any, sub: str | None) -> dict[str, Any]:
        """What an apply configuration may set: a main endpoint never sets status (it is reset),
        ``/status`` sets only status (apiserver ``GetResetFields``)."""
        if not isinstance(config, dict):
            raise apierrors.bad_request("the apply configuration must be an object")
        if "status" not in r.subresources:
            return config
        if sub == "status":
            return {k: v for k, v in config.items() if k in ("apiVersion", "kind", "metadata", "status")}
        return {k: v for k, v in config.items() if k != "status"}

    def _commit(
        self,
        r: resources.Resource,
        old: dict[str, Any],
        new: dict[str, Any],
        *,
        sub: str | None,
        dry_run: bool,
        options: admission.WriteOptions | None = None,
        applied: bool = False,
    ) -> dict[str, Any]:
        """The common end of update and patch: keep server-owned data, validate, store or not."""
        old_md = old["metadata"]
        new_md = new.setdefault("metadata", {})
        if r.namespaced and new_md.get("namespace", old_md["namespace"]) != old_md["namespace"]:
            raise apierrors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        if sub == "status":
            merged = json.loads(json.dumps(old))
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            new = merged
        elif sub == "finalize":
            merged = json.loads(json.dumps(old))
            merged.setdefault("spec", {})["finalizers"] = (new.get("spec") or {}).get("finalizers") or []
            new = merged
        else:
            if "status" in r.subresources:
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            _check_system_fields(r, old_md, new_md)
            for key in _SERVER_OWNED:
                if key in old_md:
                    new_md[key] = old_md[key]
                else:
                    new_md.pop(key, None)
            new_md["name"] = old_md["name"]
            if r.namespaced:
                new_md["namespace"] = old_md["namespace"]
        new["apiVersion"] = old["apiVersion"]
        new["kind"] = r.kind
        new["metadata"]["resourceVersion"] = old_md["resourceVersion"]
        if old_md.get("deletionTimestamp"):
            added = set(new["metadata"].get("finalizers") or []) - set(old_md.get("finalizers") or [])
            if added:
                raise apierrors.invalid(
                    r.kind,
                    old_md["name"],
                    [
                        (
                            "metadata.finalizers",
                            f"Forbidden: no new finalizers can be added if the object is being "
                            f"deleted, found new finalizers {sorted(added)}",
                        )
                    ],
                )
        self._validate(r, new, old=old, status_only=sub == "status" and not r.crd)
        if r.generation and _spec_of(new, r) != _spec_of(old, r):
            new["metadata"]["generation"] = int(old_md.get("generation", 1)) + 1
        if options is not None and options.manager and not applied:
            managedfields.record_update(
                old,
                new,
                manager=options.manager,
                api_version=r.group_version,
                now=self.now(),
                list_types=_list_types(r),
                subresource=sub or "",
            )
        elif "managedFields" not in new["metadata"] and "managedFields" in old_md and not applied:
            new["metadata"]["managedFields"] = old_md["managedFields"]
        if new == old:
            return self.as_version(r, new)  # a no-op write changes nothing, not even resourceVersion
        if dry_run:
            return self.as_version(r, new)
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers") and r.kind != "Namespace":
            return self.as_version(r, self.collector.release(r, new))
        self.store.put(r, new)
        if r.kind == "CustomResourceDefinition":
            self.table.register_crd(new)
        if r.kind == "Namespace" and new["metadata"].get("deletionTimestamp"):
            self.collector._finish_namespace(old_md["name"])
        return self.as_version(r, new)

    # ------------------------------------------------------------ delete
    def delete(
        self,
        r: resources.Resource,
        ns: str | None,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Delete one object (see :class:`shared.sim.apiserver.collector.Collector` for what follows)."""
        options = options or {}
        with self.store.lock:
            current = self.entry(r, ns, name)
            defaults.check_delete(r, name)
            obj = current.object()
            pre = options.get("preconditions") or {}
            if pre.get("uid") and pre["uid"] != current.uid:
                raise apierrors.conflict(
                    r.plural,
                    r.group,
                    name,
                    f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {current.uid}",
                )
            if pre.get("resourceVersion") and pre["resourceVersion"] != str(current.rv):
                raise apierrors.conflict(
                    r.plural,
                    r.group,
                    name,
                    f"Precondition failed: ResourceVersion in precondition: "
                    f"{pre['resourceVersion']}, ResourceVersion in object meta: {current.rv}",
                )
            if dry_run:
                return self.as_version(r, obj)
            policy = options.get("propagationPolicy")
            if policy not in (None, collector.ORPHAN, collector.FOREGROUND, collector.BACKGROUND):
                raise apierrors.bad_request(f"propagationPolicy: Unsupported value: {policy!r}")
            return self.as_version(r, self.collector.delete(r, obj, policy=policy))

    def delete_collection(
        self,
        r: resources.Resource,
        ns: str | None,
        *,
        label_selector: str | None,
        field_selector: str | None,
        options: dict[str, Any] | None = None,
        dry_run: bool = False,
    ) -> builtins.list[dict[str, Any]]:
        with self.store.lock:
            found = self.list(r, ns, label_selector=label_selector, field_selector=field_selector)
            return [self.delete(r, e.namespace or None, e.name, options, dry_run=dry_run) for e in found.items]


def _check_system_fields(r: resources.Resource, old_md: dict[str, Any], new_md: dict[str, Any]) -> None:
    """A body may repeat the system fields or leave them out, not change them
    (apimachinery:pkg/api/validation/objectmeta.go ``ValidateObjectMetaUpdate``)."""
    errors = []
    if new_md.get("uid") and new_md["uid"] != old_md.get("uid"):
        errors.append(apierrors.invalid_value("metadata.uid", new_md["uid"], "field is immutable"))
    if new_md.get("deletionTimestamp") and not old_md.get("deletionTimestamp"):
        errors.append(
            apierrors.invalid_value(
                "metadata.deletionTimestamp",
                new_md["deletionTimestamp"],
                "field is immutable; may only be changed via deletion",
            )
        )
    if errors:
        raise apierrors.invalid(r.kind, str(old_md.get("name", "")), errors, group=r.group)


def _list_types(r: resources.Resource) -> managedfields.ListTypes:
    """How the lists of a kind merge: by the schema where one says so, else Kubernetes' merge keys."""
    schema = getattr(r, "schema", None)
    by_schema = getattr(schema, "list_type", None)
    if by_schema is not None:
        return by_schema  # type: ignore[no-any-return]
    return _builtin_list_type


def _builtin_list_type(names: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    last = names[-1] if names else ""
    if last in patches.MERGE_KEYS:
        return ("map", (patches.MERGE_KEYS[last],))
    if last in patches.SET_LISTS:
        return ("set", ())
    return ("atomic", ())


def _spec_of(obj: dict[str, Any], r: resources.Resource) -> dict[str, Any]:
    skip = {"metadata", "status"} if "status" in r.subresources or not r.crd else {"metadata"}
    return {k: v for k, v in obj.items() if k not in skip}


def _object_body(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise apierrors.bad_request("the request body must be a JSON object")
    md = body.setdefault("metadata", {})
    if not isinstance(md, dict):
        raise apierrors.bad_request("metadata must be an object")
    return body


def _encode_continue(after: tuple[str, str], rv: int) -> str:
    raw = json.dumps({"v": "sim/1", "rv": rv, "start": list(after)}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[tuple[str, str], int]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        start = data["start"]
        return (str(start[0]), str(start[1])), int(data["rv"])
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise apierrors.bad_request(f"continue key is not valid: {token!r}") from exc
