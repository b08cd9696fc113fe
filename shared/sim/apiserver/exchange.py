"""One HTTP exchange with a client: the request's body and token read, the answer written.

The base of :class:`shared.sim.apiserver.handler.Handler`, which decides what to answer; here is only
how an answer leaves: the headers every answer carries, ``Warning`` headers, a table for
``as=Table``, a dropped connection, and the request's audit line, recorded just before its answer
goes out (a client acts on the answer at once, so whoever reads the audit after a response must
find the request in it). HTTP/1.1 keep-alive with Nagle off: without it every request would wait
~40 ms for a delayed ACK.
"""

from __future__ import annotations

import contextlib
import dataclasses
import email.utils
import json
import logging
import socket
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from shared.sim.apiserver import admission, audit, defaults, faults, tables
from shared.sim.apiserver.apierrors import ApiError
from shared.sim.apiserver.host import Host

logger = logging.getLogger(__name__)

JSON = "application/json"
_WARNING_BUDGET = 4096
_WARNING_CUT = 256


def warning_headers(texts: list[str]) -> list[tuple[str, str]]:
    """``Warning`` headers, one per text; past 4096 runes in all each is cut to 256
    (apiserver:pkg/endpoints/filters/warning.go)."""
    if sum(len(t) for t in texts) > _WARNING_BUDGET:
        texts = [t if len(t) <= _WARNING_CUT else t[: _WARNING_CUT - 3] + "..." for t in texts]
    return [("Warning", admission.warning_header(t)) for t in texts]


class Exchange(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "sim-apiserver/1"
    sim: Host  # set on the subclass the server builds
    _pending: audit.Record | None = None  # this request's audit line, until its answer goes out
    _warnings: list[str]  # this request's warnings, set per request
    _after_store: ApiError | None = None  # an injected failure to answer once the write is stored

    def date_time_string(self, timestamp: float | None = None) -> str:
        """The ``Date`` header carries the cluster's virtual time."""
        return email.utils.formatdate(self.sim.vclock.time() if timestamp is None else timestamp, usegmt=True)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.address_string(), *args)

    def setup(self) -> None:
        super().setup()
        self.sim._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.sim._track(self.connection, add=False)

    # ------------------------------------------------------------ request
    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > defaults.MAX_REQUEST_BYTES:
            # Read (and drop) the body anyway, so the client gets the 413 instead of a reset.
            self.close_connection = True
            left = length
            while left > 0:
                chunk = self.rfile.read(min(left, 1 << 20))
                if not chunk:
                    break
                left -= len(chunk)
            raise ApiError(
                413, "RequestEntityTooLarge", f"Request entity too large: limit is {defaults.MAX_REQUEST_BYTES}"
            )
        return self.rfile.read(length) if length else b""

    def _token(self) -> str | None:
        header = self.headers.get("Authorization") or ""
        if header.lower().startswith("bearer "):
            return header[7:].strip()
        return None

    def _wants_table(self) -> bool:
        return "as=Table" in (self.headers.get("Accept") or "")

    def _include_object(self) -> str:
        query = parse_qs(urlsplit(self.path).query)
        return (query.get("includeObject") or ["Metadata"])[0]

    # ------------------------------------------------------------ answers
    def _send(
        self,
        code: int,
        data: bytes,
        content_type: str = JSON,
        headers: dict[str, str] | list[tuple[str, str]] | None = None,
    ) -> None:
        failure, self._after_store = self._after_store, None
        if failure is not None and 200 <= code < 300:
            self._audit(failure.code, stored=True)
            data, content_type = json.dumps(failure.status(), separators=(",", ":")).encode(), JSON
            code, headers = failure.code, failure.headers
        else:
            self._audit(code)
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        # As kube-apiserver: without it, kubectl's HTTP cache takes discovery answers dated in the
        # virtual future for fresh and never sees a CRD created later.
        self.send_header("Cache-Control", "no-cache, private")
        for key, value in headers.items() if isinstance(headers, dict) else headers or ():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _audit(self, code: int, *, stored: bool = False) -> None:
        """Record the request before its answer leaves, so whoever reads the audit after a
        response sees the request in it (a client acts on the answer at once)."""
        pending: audit.Record | None = getattr(self, "_pending", None)
        self._pending = None
        if pending is not None:
            dry_run = "dryRun=" in urlsplit(self.path).query
            stored = stored or (200 <= code < 300 and pending.verb in faults.WRITE_VERBS and not dry_run)
            self.sim.audit.add(dataclasses.replace(pending, code=code, warnings=tuple(self._warnings), stored=stored))

    def _send_json(self, code: int, obj: Any, headers: dict[str, str] | list[tuple[str, str]] | None = None) -> None:
        self._send(code, json.dumps(obj, separators=(",", ":")).encode(), headers=headers)

    def _answer(self, code: int, obj: dict[str, Any], r: Any) -> None:
        """One object (a table of it for ``as=Table`` when ``r`` is its resource), with the warnings."""
        if r is not None and self._wants_table():
            obj = tables.table(r, [obj], now=self.sim.clock(), include_object=self._include_object())
        self._send_json(code, obj, warning_headers(getattr(self, "_warnings", [])))

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
