"""URL → (resource, namespace, name, subresource), and HTTP method → RBAC verb.

Kept apart from the handler so the mapping can be tested without a socket, and so the audit log,
RBAC and fault injection all describe a request with the same words.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.sim.apiserver import apierrors, resources


@dataclass(frozen=True)
class Route:
    resource: resources.Resource
    namespace: str | None
    name: str | None
    subresource: str | None

    def verb(self, method: str, *, watch: bool) -> str:
        if method == "GET":
            if self.name is None:
                return "watch" if watch else "list"
            return "get"
        if method == "DELETE":
            return "delete" if self.name is not None else "deletecollection"
        return _VERBS.get(method, method.lower())


_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


class Unserved(apierrors.ApiError):
    """A resource URL for something this server does not serve: 404, but only after authorization.

    The real server resolves a request's attributes from the path alone (RequestInfo) and authorizes
    them before any handler looks the resource up, so a caller without the grant is told 403 for a CRD
    that is not installed, and only an authorized caller learns it is missing.
    """

    def __init__(self, route: Route, message: str = "the server could not find the requested resource") -> None:
        super().__init__(404, "NotFound", message)
        self.route = route


def parse(table: resources.ResourceTable, path: str) -> Route | None:
    """Resolve a resource URL; ``None`` when the path is not a resource path at all."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    if not rest:
        return None
    namespace = None
    # /namespaces/NS/PLURAL/... is namespaced; /namespaces/NAME[/status|finalize] is the namespace itself.
    if (
        rest[0] == "namespaces"
        and len(rest) >= 3
        and not (len(rest) == 3 and rest[2] in ("status", "finalize") and not group)
    ):
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        raise apierrors.ApiError(404, "NotFound", f"the server could not find the requested resource ({path})")
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    resource = table.lookup(group, version, rest[0])
    if resource is None:
        unknown = resources.Resource(group, version, rest[0], "", namespaced=namespace is not None)
        raise Unserved(Route(unknown, namespace, name, sub))
    if (namespace is not None and not resource.namespaced) or (sub is not None and sub not in resource.subresources):
        raise Unserved(Route(resource, namespace, name, sub))
    return Route(resource, namespace, name, sub)
