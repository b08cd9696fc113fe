"""The API verbs over the store: create, get, list, update, patch, delete, with their semantics.

This is where the emulator earns "faithful": optimistic concurrency (a stale resourceVersion or a
failed precondition is 409), server-owned metadata (uid, creationTimestamp, generation), status
kept to the status subresource and spec kept off it, no-op writes that change nothing, finalizers
and deletionTimestamp, ``dryRun=All`` that validates everything and stores nothing, and the size
limits. HTTP concerns (URLs, headers, content types) stay in :mod:`shared.sim.apiserver.handler`.
"""

from __future__ import annotations

import builtins
import random
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from shared.sim.apiserver import (
    admission,
    apierrors,
    collector,
    defaults,
    managedfields,
    paging,
    patches,
    patchtypes,
    readviews,
    resources,
    selectors,
    store,
    webhooks,
    writerules,
)

_PATCHERS: dict[str, Callable[[dict[str, Any], Any], Any]] = {
    patchtypes.JSON_PATCH: patches.json_patch,
    patchtypes.MERGE: patches.merge_patch,
    patchtypes.STRATEGIC: patches.strategic_merge,
}


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
        self.webhooks: list[webhooks.Webhook] = []

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
    ) -> paging.ListResult:
        """Matching entries in key order; ``limit`` and ``continue`` page through them."""
        try:
            labels = selectors.parse_labels(label_selector)
            fields = selectors.parse_fields(field_selector, r)
        except selectors.SelectorError as exc:
            raise apierrors.bad_request(str(exc)) from exc
        return paging.page(self.store, r, ns, labels=labels, fields=fields, limit=limit, continue_token=continue_token)

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
        obj = writerules.object_body(body)
        admission.decode(r, obj, options=options, operation=operation)
        obj = self.views.to_storage(r, obj)
        obj = self._managed_on_create(r, obj, options, operation)
        for hook in self.webhooks:
            hook.mutate(r, obj, None)
        md = obj["metadata"]
        writerules.name_new(r, md, ns, self.rng)
        with self.store.lock:
            if r.namespaced:
                admission.check_namespace_open(self.store, md["namespace"])
            self._stamp_new(r, obj)
            defaults.on_create(r, obj, self.now(), priorities=admission.priorities(self.store, r, obj))
            self._validate(r, obj, old=None)
            for hook in self.webhooks:
                hook.validate(r, obj, None)
            # Storage answers AlreadyExists only for a valid object (validation runs first).
            if self.store.get(r.group_resource, md.get("namespace", ""), md["name"]) is not None:
                raise apierrors.already_exists(r.plural, r.group, md["name"])
            if options.manager and operation != "apply":
                self._record_create(r, obj, options.manager)
            if not dry_run:
                self._store_new(r, obj)
            return self.as_version(r, obj)

    def _managed_on_create(
        self, r: resources.Resource, obj: dict[str, Any], options: admission.WriteOptions, operation: str
    ) -> dict[str, Any]:
        """An apply records its manager's fields; any other create drops the managedFields it was sent."""
        if operation == "apply":
            return managedfields.apply(
                None,
                writerules.applied_config(r, obj, None),
                manager=options.manager,
                api_version=r.group_version,
                now=self.now(),
                force=options.force,
                list_types=writerules.list_types(r),
            )
        obj.get("metadata", {}).pop("managedFields", None)
        return obj

    def _record_create(self, r: resources.Resource, obj: dict[str, Any], manager: str) -> None:
        """The creator owns what it set. Where the create strategy resets status (a kind with a
        status subresource), the status the server filled in is nobody's: the strategy's reset
        fields are left out of the manager's set, as the real field manager leaves them."""
        resets_status = "status" in r.subresources and not r.keep_status_on_create
        # A shallow copy: it shares ``metadata``, where the recorded managedFields land.
        owned = {k: v for k, v in obj.items() if k != "status"} if resets_status else obj
        managedfields.record_update(
            None,
            owned,
            manager=manager,
            api_version=r.group_version,
            now=self.now(),
            list_types=writerules.list_types(r),
        )

    def _stamp_new(self, r: resources.Resource, obj: dict[str, Any]) -> None:
        """The server-owned metadata of a new object (whatever the body said), at the storage version."""
        md = obj["metadata"]
        for key in writerules.SERVER_OWNED:
            md.pop(key, None)
        obj["apiVersion"] = self._storage_version(r)
        obj["kind"] = r.kind
        md["uid"] = self.new_uid()
        md["creationTimestamp"] = self.now()
        if r.generation:
            md["generation"] = 1

    def _store_new(self, r: resources.Resource, obj: dict[str, Any]) -> None:
        self.store.put(r, obj)
        if r.kind == "CustomResourceDefinition":
            self.table.register_crd(obj)
        if r.kind == "Namespace":
            self._create_default_service_account(obj["metadata"]["name"])

    def _storage_version(self, r: resources.Resource) -> str:
        if r.storage_version:
            return f"{r.group}/{r.storage_version}"
        return r.group_version

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
        new = writerules.object_body(body)
        admission.decode(r, new, options=options or admission.WriteOptions(), operation="update")
        new = self.views.to_storage(r, new)
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
        patchtypes.check(r, content_type, field_manager)
        with self.store.lock:
            found = self.store.get(r.group_resource, (ns or "") if r.namespaced else "", name)
            if found is None:
                if content_type == patchtypes.APPLY and sub is None:
                    return self.create(r, ns, body, dry_run=dry_run, options=options, operation="apply")
                raise apierrors.not_found(r.plural, r.group, name)
            current = found.object()
            if content_type == patchtypes.APPLY and isinstance(body, dict):
                admission.decode(r, body, options=options, operation="apply")
            # A patch applies to the object as the client's version shows it.
            patched = writerules.patched(
                r,
                self.views.from_storage(r, found.object()),
                body,
                patcher=_PATCHERS.get(content_type),
                sub=sub,
                options=options,
                manager=options.manager or field_manager or "",
                now=self.now(),
            )
            if content_type != patchtypes.APPLY:
                admission.decode(r, patched, options=options, operation="patch", patched=True)
            patched = self.views.to_storage(r, patched)
            if patched["metadata"].get("resourceVersion") != str(found.rv):
                raise apierrors.conflict(r.plural, r.group, name)
            if patched["metadata"].get("name") != name:
                raise apierrors.bad_request(f"the name of the object does not match the name on the URL ({name})")
            return self._commit(
                r, current, patched, sub=sub, dry_run=dry_run, options=options, applied=content_type == patchtypes.APPLY
            )

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
        new = writerules.carry_over(r, old, new, sub=sub)
        writerules.check_finalizers(r, old_md, new["metadata"])
        hooks = self.webhooks if sub is None else []
        for hook in hooks:
            hook.mutate(r, new, old)
        self._validate(r, new, old=old, status_only=sub == "status" and not r.crd)
        for hook in hooks:
            hook.validate(r, new, old)
        if r.generation and writerules.spec_of(new, r) != writerules.spec_of(old, r):
            new["metadata"]["generation"] = int(old_md.get("generation", 1)) + 1
        self._record_managers(r, old, new, sub=sub, options=options, applied=applied)
        if new == old or dry_run:
            return self.as_version(r, new)  # a no-op write changes nothing, not even resourceVersion
        return self.as_version(r, self._store_update(r, old_md, new))

    def _record_managers(
        self,
        r: resources.Resource,
        old: dict[str, Any],
        new: dict[str, Any],
        *,
        sub: str | None,
        options: admission.WriteOptions | None,
        applied: bool,
    ) -> None:
        """An update's manager owns what it changed; without one, the stored managers stay."""
        if options is not None and options.manager and not applied:
            managedfields.record_update(
                old,
                new,
                manager=options.manager,
                api_version=r.group_version,
                now=self.now(),
                list_types=writerules.list_types(r),
                subresource=sub or "",
            )
        elif "managedFields" not in new["metadata"] and "managedFields" in old["metadata"] and not applied:
            new["metadata"]["managedFields"] = old["metadata"]["managedFields"]

    def _store_update(self, r: resources.Resource, old_md: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """Store ``new``; what the store (or the collector, for a deleted object released) holds now."""
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers") and r.kind != "Namespace":
            return self.collector.release(r, new)
        self.store.put(r, new)
        if r.kind == "CustomResourceDefinition":
            self.table.register_crd(new)
        if r.kind == "Namespace" and new["metadata"].get("deletionTimestamp"):
            self.collector._finish_namespace(old_md["name"])
        return new

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
            writerules.check_preconditions(r, name, current, options.get("preconditions") or {})
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
