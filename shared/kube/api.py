"""``KubeApi``: what the domain code holds to reach a cluster, typed.

Every call the domain packages make (get, list, create, replace, delete, watch, Leases, Events,
evictions, pod logs) is a function of this package taking the client as its first argument, and
every one of them goes through one method of it: the official ``ApiClient.call_api`` with the
keyword arguments below. So the protocol is that method. ``shared.kube.client`` builds the real
one; a test may hand in any object with ``call_api``. Base layer, beside ``rest``; it imports
nothing, so a domain module can name the type without loading the ``kubernetes`` package.

Left out on purpose: the generated typed APIs (``CoreV1Api`` and friends): reading a thousand
objects through them costs seconds (``rest`` explains), and nothing of ours uses them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class KubeApi(Protocol):
    """A client of one cluster: the official ``kubernetes.client.ApiClient`` or a stand-in."""

    def call_api(
        self,
        resource_path: str,
        method: str,
        *,
        query_params: list[tuple[str, Any]] | None = ...,
        header_params: dict[str, str] | None = ...,
        body: Any = ...,
        auth_settings: list[str] | None = ...,
        response_type: str | None = ...,
        _return_http_data_only: bool | None = ...,
        _preload_content: bool = ...,
        _request_timeout: float | None = ...,
    ) -> Any:
        """One HTTP request to ``resource_path`` (``/api/v1/nodes``, ``/apis/GROUP/VERSION/...``)."""
        ...


ApiFactory = Callable[[], KubeApi]
"""How commands pass a client they may not need: built on first call (``client.LazyClient``)."""
