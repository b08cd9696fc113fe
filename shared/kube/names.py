"""Object names for shell completion: one quick list call that never fails loudly.

A shell calls the program on every Tab; an unreachable cluster, a missing kubeconfig or a kind the
cluster does not serve must leave the terminal as it was (no candidates, no message) and never
hold the shell for longer than a moment. So this is one GET of at most ``LIMIT`` objects with a
short timeout and no retries, unlike ``shared.kube.rest``, whose calls retry and raise.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

logger = logging.getLogger(__name__)

TIMEOUT = 1.0
"""Seconds to connect and to read; a shell user notices more than about a second of delay."""
LIMIT = 500
"""At most this many names: more are no help on a terminal, and a bigger list is slower to fetch."""


def names(
    path: str, *, kubeconfig: Path | None = None, context: str | None = None, timeout: float = TIMEOUT
) -> list[str]:
    """The names of the objects of the collection at ``path``, sorted; ``[]`` on any failure."""
    try:
        from shared.kube import client

        api = client.new_client(kubeconfig=kubeconfig, context=context, connect_retries=0)
    except Exception:  # no configuration, unreadable kubeconfig: nothing to offer
        logger.debug("no cluster for completion", exc_info=True)
        return []
    try:
        response = api.call_api(
            path,
            "GET",
            query_params=[("limit", LIMIT)],
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
            _preload_content=False,
            _request_timeout=timeout,
        )
        items = json.loads(response.data).get("items") or []
        return sorted(str(i["metadata"]["name"]) for i in items)
    except Exception:  # refused, timed out, not served, not JSON: the shell shows nothing
        logger.debug("listing %s for completion failed", path, exc_info=True)
        return []
    finally:
        client.close(api)
