"""ControllerRevisions: the template history DaemonSets and StatefulSets keep (``apps/v1``).

Each revision stores the patch that replaces the owner's ``spec.template`` (``data``), a
``revision`` number and a controller reference. :func:`ensure` is ``constructHistory`` /
``getStatefulSetRevisions``: the revision whose data equals the current template is reused (its
number raised to the newest when an old template comes back), otherwise a new one is created,
named ``<owner>-<hash>``. :func:`truncate` deletes old revisions beyond ``revisionHistoryLimit``
that no live pod still uses.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.controllers import hashes, kit

PLURAL = "controllerrevisions"
DEFAULT_LIMIT = 10


@dataclass(frozen=True)
class Revisions:
    current: dict[str, Any]
    """The revision of the owner's template as it is now (DaemonSet: ``cur``; StatefulSet: ``updateRevision``)."""
    all: list[dict[str, Any]]


def owned(ctx: kit.Context, uid: str) -> list[dict[str, Any]]:
    revs = [e.object() for e in ctx.owned(uid, ("apps", PLURAL))]
    revs = [r for r in revs if (kit.controller_of(r) or {}).get("uid") == uid]
    return sorted(revs, key=lambda r: (int(r.get("revision") or 0), r["metadata"]["name"]))


def ensure(
    ctx: kit.Context,
    owner: dict[str, Any],
    *,
    kind: str,
    name_hash: str,
    labels: dict[str, str],
    annotations: dict[str, str] | None = None,
) -> Revisions | None:
    """The current revision of ``owner``'s template, created or renumbered as needed."""
    r = ctx.resource("apps", PLURAL)
    md = owner["metadata"]
    data = hashes.template_patch((owner.get("spec") or {}).get("template") or {})
    revs = owned(ctx, md["uid"])
    newest = max((int(rev.get("revision") or 0) for rev in revs), default=0)
    equal = [rev for rev in revs if hashes.canonical(rev.get("data")) == hashes.canonical(data)]
    if equal:
        current = equal[-1]
        if int(current.get("revision") or 0) < newest:
            renumbered = copy.deepcopy(current)
            renumbered["revision"] = newest + 1
            current = ctx.update(r, renumbered) or current
            revs = owned(ctx, md["uid"])
        return Revisions(current, revs)
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": f"{md['name']}-{name_hash}",
            "namespace": md["namespace"],
            "labels": labels,
            "ownerReferences": [kit.controller_ref(owner, "apps/v1", kind)],
        },
        "data": data,
        "revision": newest + 1,
    }
    if annotations:
        body["metadata"]["annotations"] = annotations
    try:
        current = ctx.create(r, md["namespace"], body)
    except apierrors.ApiError as exc:
        if exc.code == 409:  # a hash collision: the caller bumps collisionCount and tries again
            return None
        raise
    return Revisions(current, owned(ctx, md["uid"]))


def truncate(ctx: kit.Context, owner: dict[str, Any], revs: list[dict[str, Any]], live: set[str], keep: str) -> None:
    """Delete the oldest revisions beyond ``revisionHistoryLimit``, sparing ``keep`` and those in ``live``."""
    limit = int((owner.get("spec") or {}).get("revisionHistoryLimit", DEFAULT_LIMIT))
    old = [rev for rev in revs if rev["metadata"]["name"] != keep and rev["metadata"]["name"] not in live]
    r = ctx.resource("apps", PLURAL)
    for rev in old[: max(0, len(old) - limit)]:
        ctx.delete(r, rev["metadata"]["namespace"], rev["metadata"]["name"], rev["metadata"]["uid"])
