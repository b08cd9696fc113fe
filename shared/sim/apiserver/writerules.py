"""What a write may set and what the server keeps, as the generic registry's strategies rule it.

The checks and carry-overs of :class:`shared.sim.apiserver.api.Api`'s create, update and patch that
need nothing but the objects: the body must be an object; a new object's namespace and name
(``generateName``); on update, the server-owned metadata kept from the stored object, status kept to
``/status`` and spec off it (apiserver:pkg/registry/rest/update.go, the kinds' ``PrepareForUpdate``),
the system fields a body may not change, no finalizer added to an object being deleted, and when
``metadata.generation`` moves. Locking, storing and admission are the Api's.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from shared.sim.apiserver import admission, apierrors, fieldpaths, managedfields, patches, resources, store
from shared.sim.apiserver.apierrors import ApiError

SERVER_OWNED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_GENERATE_PREFIX = 58  # 63 - 5 random characters
_NAMESPACE_MISMATCH = "the namespace of the provided object does not match the namespace sent on the request"


def object_body(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise apierrors.bad_request("the request body must be a JSON object")
    md = body.setdefault("metadata", {})
    if not isinstance(md, dict):
        raise apierrors.bad_request("metadata must be an object")
    return body


def name_new(r: resources.Resource, md: dict[str, Any], ns: str | None, rng: random.Random) -> None:
    """A new object's namespace (the request's) and name (``generateName`` completed), or why not."""
    if r.namespaced:
        if md.get("namespace") and ns and md["namespace"] != ns:
            raise apierrors.bad_request(_NAMESPACE_MISMATCH)
        md["namespace"] = ns or md.get("namespace") or "default"
    else:
        md.pop("namespace", None)
    if md.get("resourceVersion"):
        raise apierrors.bad_request("resourceVersion should not be set on objects to be created")
    if not md.get("name") and md.get("generateName"):
        # apiserver names.SimpleNameGenerator: the prefix is cut to leave room for 5 characters.
        md["name"] = md["generateName"][:_GENERATE_PREFIX] + "".join(rng.choice(_NAME_ALPHABET) for _ in range(5))
    if not md.get("name"):
        raise apierrors.invalid(r.kind, "", [("metadata.name", "Required value: name or generateName is required")])


def check_preconditions(r: resources.Resource, name: str, current: store.Entry, pre: dict[str, Any]) -> None:
    """A delete's preconditions: the uid and resourceVersion it names must be the stored ones (409)."""
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


def applied_config(r: resources.Resource, config: Any, sub: str | None) -> dict[str, Any]:
    """What an apply configuration may set: a main endpoint never sets status (it is reset),
    ``/status`` sets only status (apiserver ``GetResetFields``)."""
    if not isinstance(config, dict):
        raise apierrors.bad_request("the apply configuration must be an object")
    if "status" not in r.subresources:
        return config
    if sub == "status":
        return {k: v for k, v in config.items() if k in ("apiVersion", "kind", "metadata", "status")}
    return {k: v for k, v in config.items() if k != "status"}


def patched(
    r: resources.Resource,
    current: dict[str, Any],
    body: Any,
    *,
    patcher: Callable[[dict[str, Any], Any], Any] | None,
    sub: str | None,
    options: admission.WriteOptions,
    manager: str,
    now: str,
) -> dict[str, Any]:
    """``current`` with the patch applied by ``patcher`` (None: ``body`` is an apply configuration);
    422 when it does not apply."""
    try:
        if patcher is None:
            result = managedfields.apply(
                current,
                applied_config(r, body, sub),
                manager=manager,
                api_version=r.group_version,
                now=now,
                force=options.force,
                list_types=list_types(r),
                subresource=sub or "",
            )
        else:
            result = patcher(current, body)
    except patches.PatchError as exc:
        raise ApiError(422, "Invalid", str(exc)) from exc
    if not isinstance(result, dict) or not isinstance(result.get("metadata"), dict):
        raise ApiError(422, "Invalid", "the patch must leave an object with metadata")
    return result


def carry_over(r: resources.Resource, old: dict[str, Any], new: dict[str, Any], *, sub: str | None) -> dict[str, Any]:
    """The object an update stores before validation: what the endpoint (main, ``/status``,
    ``/finalize``) may not change comes from ``old``."""
    old_md = old["metadata"]
    new_md = new.setdefault("metadata", {})
    if r.namespaced and new_md.get("namespace", old_md["namespace"]) != old_md["namespace"]:
        raise apierrors.bad_request(_NAMESPACE_MISMATCH)
    if sub == "status":
        new = _with_status_of(new, json.loads(json.dumps(old)))
    elif sub == "finalize":
        merged = json.loads(json.dumps(old))
        merged.setdefault("spec", {})["finalizers"] = (new.get("spec") or {}).get("finalizers") or []
        new = merged
    else:
        if "status" in r.subresources:
            _with_status_of(old, new)
        check_system_fields(r, old_md, new_md)
        _keep_server_owned(r, old_md, new_md)
    new["apiVersion"] = old["apiVersion"]
    new["kind"] = r.kind
    new["metadata"]["resourceVersion"] = old_md["resourceVersion"]
    return new


def _with_status_of(source: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    """``target`` with the status of ``source`` (none when it has none)."""
    if "status" in source:
        target["status"] = source["status"]
    else:
        target.pop("status", None)
    return target


def _keep_server_owned(r: resources.Resource, old_md: dict[str, Any], new_md: dict[str, Any]) -> None:
    for key in SERVER_OWNED:
        if key in old_md:
            new_md[key] = old_md[key]
        else:
            new_md.pop(key, None)
    new_md["name"] = old_md["name"]
    if r.namespaced:
        new_md["namespace"] = old_md["namespace"]


def check_system_fields(r: resources.Resource, old_md: dict[str, Any], new_md: dict[str, Any]) -> None:
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


def check_finalizers(r: resources.Resource, old_md: dict[str, Any], new_md: dict[str, Any]) -> None:
    """No finalizer may be added to an object being deleted."""
    if not old_md.get("deletionTimestamp"):
        return
    added = set(new_md.get("finalizers") or []) - set(old_md.get("finalizers") or [])
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


def spec_of(obj: dict[str, Any], r: resources.Resource) -> dict[str, Any]:
    """What bumps ``metadata.generation`` when it changes: all but metadata (and status, when kept apart)."""
    skip = {"metadata", "status"} if "status" in r.subresources or not r.crd else {"metadata"}
    return {k: v for k, v in obj.items() if k not in skip}


def list_types(r: resources.Resource) -> fieldpaths.ListTypes:
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
