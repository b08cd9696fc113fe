"""Prometheus metrics: a small registry (counters, gauges, histograms with labels) and its HTTP endpoint.

Standard library only, so importing it costs nothing at start-up. The controllers record into the
process-wide ``REGISTRY``; ``serve(address)`` exposes it in the Prometheus text format 0.0.4 on
``GET /metrics`` (``/healthz`` answers ``ok``). The endpoint binds 127.0.0.1 unless told otherwise:
``--metrics-addr :9090`` still means loopback; listening on every interface takes an explicit
``0.0.0.0:9090`` (what the in-cluster manifests pass). Metric names are listed in docs/metrics.md.
"""

from __future__ import annotations

import math
import socket
import threading
from collections.abc import Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from shared import errors

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)

LabelValues = tuple[str, ...]


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def _valid_name(name: str) -> bool:
    return bool(name) and not name[0].isdigit() and all(c.isalnum() or c in "_:" for c in name) and name.isascii()


class _Metric:
    kind = ""

    def __init__(self, name: str, help_text: str, labels: Sequence[str]) -> None:
        if not _valid_name(name) or not all(_valid_name(n) and ":" not in n for n in labels):
            raise ValueError(f"invalid metric or label name: {name} {list(labels)}")
        self.name = name
        self.help = help_text
        self.labels = tuple(labels)
        self._lock = threading.Lock()

    def _key(self, labels: dict[str, str]) -> LabelValues:
        if set(labels) != set(self.labels):
            raise ValueError(f"{self.name} takes labels {list(self.labels)}, got {sorted(labels)}")
        return tuple(str(labels[n]) for n in self.labels)

    def _label_text(self, values: LabelValues, extra: tuple[tuple[str, str], ...] = ()) -> str:
        pairs = [*zip(self.labels, values, strict=True), *extra]
        if not pairs:
            return ""
        return "{" + ",".join(f'{k}="{_escape_label(v)}"' for k, v in pairs) + "}"

    def samples(self) -> list[str]:
        raise NotImplementedError

    def exposition(self) -> list[str]:
        return [f"# HELP {self.name} {_escape_help(self.help)}", f"# TYPE {self.name} {self.kind}", *self.samples()]


class Counter(_Metric):
    """A value that only goes up (``*_total``)."""

    kind = "counter"

    def __init__(self, name: str, help_text: str, labels: Sequence[str] = ()) -> None:
        super().__init__(name, help_text, labels)
        self._values: dict[LabelValues, float] = {} if labels else {(): 0.0}

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        if amount < 0:
            raise ValueError("a counter only goes up")
        key = self._key(labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, **labels: str) -> float:
        with self._lock:
            return self._values.get(self._key(labels), 0.0)

    def samples(self) -> list[str]:
        with self._lock:
            items = sorted(self._values.items())
        return [f"{self.name}{self._label_text(k)} {_number(v)}" for k, v in items]


class Gauge(Counter):
    """A value that goes up and down."""

    kind = "gauge"

    def set(self, value: float, **labels: str) -> None:
        key = self._key(labels)
        with self._lock:
            self._values[key] = float(value)

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        key = self._key(labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def dec(self, amount: float = 1.0, **labels: str) -> None:
        self.inc(-amount, **labels)


class Histogram(_Metric):
    """Observations counted into cumulative buckets, with their sum and count."""

    kind = "histogram"

    def __init__(
        self, name: str, help_text: str, labels: Sequence[str] = (), buckets: Sequence[float] = DEFAULT_BUCKETS
    ) -> None:
        super().__init__(name, help_text, labels)
        if "le" in self.labels:
            raise ValueError("a histogram cannot have a label named 'le'")
        self.buckets = tuple(sorted(float(b) for b in buckets if not math.isinf(b)))
        self._data: dict[LabelValues, tuple[list[int], float, int]] = {}

    def observe(self, value: float, **labels: str) -> None:
        key = self._key(labels)
        with self._lock:
            counts, total, n = self._data.get(key, ([0] * len(self.buckets), 0.0, 0))
            for i, bound in enumerate(self.buckets):
                if value <= bound:
                    counts[i] += 1
            self._data[key] = (counts, total + value, n + 1)

    def count(self, **labels: str) -> int:
        with self._lock:
            return self._data.get(self._key(labels), ([], 0.0, 0))[2]

    def samples(self) -> list[str]:
        with self._lock:
            items = sorted((k, (list(c), s, n)) for k, (c, s, n) in self._data.items())
        lines = []
        for key, (counts, total, n) in items:
            for bound, c in zip(self.buckets, counts, strict=True):
                lines.append(f"{self.name}_bucket{self._label_text(key, (('le', _number(bound)),))} {c}")
            lines.append(f"{self.name}_bucket{self._label_text(key, (('le', '+Inf'),))} {n}")
            lines.append(f"{self.name}_sum{self._label_text(key)} {_number(total)}")
            lines.append(f"{self.name}_count{self._label_text(key)} {n}")
        return lines


class Registry:
    """Metrics by name; asking twice for the same name and type returns the same metric."""

    def __init__(self) -> None:
        self._metrics: dict[str, _Metric] = {}
        self._lock = threading.Lock()

    def _get(self, cls: type[Any], name: str, help_text: str, labels: Sequence[str], **extra: Any) -> Any:
        with self._lock:
            found = self._metrics.get(name)
            if found is not None:
                if type(found) is not cls or found.labels != tuple(labels):
                    raise ValueError(f"metric {name} is already registered differently")
                return found
            metric = cls(name, help_text, labels, **extra)
            self._metrics[name] = metric
            return metric

    def counter(self, name: str, help_text: str, labels: Sequence[str] = ()) -> Counter:
        metric: Counter = self._get(Counter, name, help_text, labels)
        return metric

    def gauge(self, name: str, help_text: str, labels: Sequence[str] = ()) -> Gauge:
        metric: Gauge = self._get(Gauge, name, help_text, labels)
        return metric

    def histogram(
        self, name: str, help_text: str, labels: Sequence[str] = (), buckets: Sequence[float] = DEFAULT_BUCKETS
    ) -> Histogram:
        metric: Histogram = self._get(Histogram, name, help_text, labels, buckets=buckets)
        return metric

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._metrics)

    def exposition(self, prefixes: Iterable[str] = ()) -> str:
        """The text format, metrics sorted by name; only those starting with one of ``prefixes`` if given."""
        wanted = tuple(prefixes)
        with self._lock:
            chosen = [m for n, m in sorted(self._metrics.items()) if not wanted or n.startswith(wanted)]
        return "".join(line + "\n" for m in chosen for line in m.exposition())


REGISTRY = Registry()
"""The process-wide registry the controllers record into."""


def parse_address(address: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` (loopback) or ``PORT`` (loopback); ``[::1]:PORT`` for IPv6."""
    text = address.strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or DEFAULT_HOST
    try:
        number = int(port)
    except ValueError:
        raise errors.InvalidInput(
            f"invalid metrics address {address!r} (want HOST:PORT)", where="--metrics-addr"
        ) from None
    if not 0 <= number <= 65535:
        raise errors.InvalidInput(f"invalid port in {address!r}", where="--metrics-addr")
    return host, number


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            body, ctype, code = self.server.registry.exposition(self.server.prefixes).encode(), CONTENT_TYPE, 200
        elif path == "/healthz":
            body, ctype, code = b"ok\n", "text/plain; charset=utf-8", 200
        else:
            body, ctype, code = b"not found\n", "text/plain; charset=utf-8", 404
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # no access log on stderr
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    registry: Registry
    prefixes: tuple[str, ...]


class _Server6(_Server):
    address_family = socket.AF_INET6


class MetricsServer:
    """``GET /metrics`` on a background thread; ``stop()`` closes the socket and joins the thread."""

    def __init__(
        self, address: str = f"{DEFAULT_HOST}:0", registry: Registry | None = None, prefixes: Iterable[str] = ()
    ) -> None:
        host, port = parse_address(address)
        try:
            self._server = (_Server6 if ":" in host else _Server)((host, port), _Handler)
        except OSError as exc:
            raise errors.Unavailable(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}", where="--metrics-addr"
            ) from None
        self._server.registry = registry or REGISTRY
        self._server.prefixes = tuple(prefixes)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="metrics-http", daemon=True
        )

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> MetricsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(address: str | None, registry: Registry | None = None, prefixes: Iterable[str] = ()) -> MetricsServer | None:
    """Start the endpoint on ``address``; ``None`` or empty starts nothing (metrics are optional)."""
    if not address:
        return None
    return MetricsServer(address, registry, prefixes).start()
