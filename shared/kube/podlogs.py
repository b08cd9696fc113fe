"""Pod logs as text, exactly as the container wrote them.

The generated client's ``read_namespaced_pod_log`` deserialises a log that happens to be valid
JSON (``dcgmi diag -j``) into a Python object and prints its ``repr``; asking for the raw
response (``_preload_content=False`` semantics) keeps the bytes. Transient failures are retried
like every other call (``shared.kube.retry``).
"""

from __future__ import annotations

from shared.kube import rest, retry
from shared.kube.api import KubeApi


def read(api: KubeApi, namespace: str, pod: str, *, container: str | None = None) -> str:
    """The whole log of ``pod`` (its first or named container), decoded as UTF-8 with replacement."""
    path = rest.core_path("pods", namespace, pod) + "/log"
    query = [("container", container)] if container else []

    def call() -> str:
        response = api.call_api(
            path,
            "GET",
            query_params=query,
            header_params={"Accept": "*/*"},
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
            _preload_content=False,
            _request_timeout=60,
        )
        return bytes(response.data or b"").decode("utf-8", errors="replace")

    return retry.call(call, what=f"log of pod {namespace}/{pod}")
