"""A request's query parameters, read as the real server reads them.

The handler hands the parsed query string here for the parameters whose reading has rules of its
own: booleans as Go's ``strconv.ParseBool`` takes them, ``dryRun`` (only ``All``), ``limit``, and
``sendInitialEvents`` with the options it needs (``ValidateListOptions``). Selectors are
:mod:`shared.sim.apiserver.selectors`; field validation and field managers are the write path's.
"""

from __future__ import annotations

from shared.sim.apiserver import apierrors


def flag(query: dict[str, str], name: str) -> bool:
    """Boolean query parameters as Go's strconv.ParseBool reads them (the Python client sends ``True``)."""
    return query.get(name, "").lower() in ("true", "1", "t")


def dry_run(query: dict[str, str]) -> bool:
    value = query.get("dryRun")
    if value in (None, ""):
        return False
    if value != "All":
        raise apierrors.bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return True


def limit(query: dict[str, str]) -> int:
    try:
        return int(query.get("limit") or 0)
    except ValueError as exc:
        raise apierrors.bad_request(f"invalid limit: {query.get('limit')}") from exc


def watch_list(query: dict[str, str]) -> bool:
    """Whether a watch asks for a streaming list, checked as ``ValidateListOptions`` checks it
    (apimachinery:pkg/apis/meta/internalversion/validation/validation.go)."""
    if not flag(query, "sendInitialEvents"):
        return False
    errors = []
    if query.get("resourceVersionMatch") != "NotOlderThan":
        errors.append(
            apierrors.forbidden(
                "resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
            )
        )
    if not flag(query, "allowWatchBookmarks"):
        errors.append(
            apierrors.forbidden("allowWatchBookmarks", "sendInitialEvents requires setting allowWatchBookmarks to true")
        )
    if errors:
        raise apierrors.invalid("ListOptions", "", errors, group="meta.k8s.io")
    return True
