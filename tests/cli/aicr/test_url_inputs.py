"""``--criteria``, ``--snapshot`` and ``--recipe`` read from http(s) URLs, through the input layer.

Covers, against an http.server on 127.0.0.1 started by the test: a criteria URL is fetched, not read
as a file path, and its errors name the URL and line; a snapshot URL gives the same recipe as the
same file; a recipe URL is bundled; each way a fetch fails is one stderr line naming the URL, with
nothing written: 404 (exit 2), 500 (exit 6), nothing listening (exit 6), a body past
``AICR_MAX_INPUT_BYTES`` with or without a Content-Length (exit 2), text that is not UTF-8 or nested
past the YAML limit (exit 2), a server that never answers or trickles a byte at a time and never
finishes within ``AICR_HTTP_TIMEOUT`` (exit 5); user info and query never appear in a message (also
for malformed URLs), and user info reaches the server as Basic authentication; a URL as ``-o`` is
refused before the work.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from shared import yamlio
from tests.recipe import minicatalog

LIMIT = 4096
CRITERIA = b"kind: RecipeCriteria\napiVersion: aicr.run/v1alpha2\nspec:\n  service: eks\n  intent: training\n"


@dataclass
class Site:
    """What the test server serves (path → body) and what it saw."""

    base: str
    pages: dict[str, bytes] = field(default_factory=dict)
    authorizations: list[str | None] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str) -> str:
        return f"{self.base}{path}"


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            site.authorizations.append(self.headers.get("Authorization"))
            if path == "/silent":
                site.release.wait(60)  # answers nothing until the test ends
                return
            if path == "/trickle":  # a byte at a time, never done: only a deadline for the whole ends it
                self.send_response(200)
                self.send_header("Content-Length", "1000")
                self.end_headers()
                while not site.release.wait(0.05):
                    self.wfile.write(b"#")
                    self.wfile.flush()
                return
            if path == "/error":
                self.send_error(500)
                return
            body = site.pages.get(path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            if path != "/endless":  # no length: read until the server closes
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True

    return Handler


@pytest.fixture()
def site() -> Iterator[Site]:
    current = Site(base="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(current))
    server.daemon_threads = True
    current.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield current
    finally:
        current.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture()
def cat_dir(tmp_path: Path) -> Path:
    return minicatalog.write(tmp_path / "cat", minicatalog.default_documents())


def _only_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_a_criteria_url_is_fetched_not_read_as_a_path(run_cli, site: Site, cat_dir: Path) -> None:  # type: ignore[no-untyped-def]
    site.pages["/criteria.yaml"] = CRITERIA
    result = run_cli(
        "aicr", "recipe", "--catalog", str(cat_dir), "--criteria", site.url("/criteria.yaml"), "-t", "json"
    )
    assert result.code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["criteria"]["service"], doc["criteria"]["intent"]) == ("eks", "training")
    assert doc["metadata"]["appliedOverlays"] == ["base", "eks", "eks-training"]


def test_a_criteria_error_names_the_url_and_line(run_cli, site: Site, cat_dir: Path) -> None:  # type: ignore[no-untyped-def]
    site.pages["/c.yaml"] = b"spec:\n  service: eks\n  accelerator: h300\n"
    result = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--criteria", site.url("/c.yaml"))
    assert result.code == 2
    assert _only_error_line(result.stderr).startswith(
        f"error: {site.url('/c.yaml')}:3 spec.accelerator: invalid accelerator 'h300'"
    )


def test_a_snapshot_url_gives_the_recipe_the_same_file_gives(run_cli, site: Site, team_shared: Path) -> None:  # type: ignore[no-untyped-def]
    snapshot = team_shared / "research/aicr-golden/inputs/snapshot-old-k8s-gb200.yaml"
    site.pages["/snapshot.yaml"] = snapshot.read_bytes()
    from_url = run_cli("aicr", "recipe", "--snapshot", site.url("/snapshot.yaml"), "--intent", "training")
    from_file = run_cli("aicr", "recipe", "--snapshot", str(snapshot), "--intent", "training")
    assert from_url.code == 0, from_url.stderr
    assert from_url.stdout == from_file.stdout
    assert yamlio.loads(from_url.stdout)["kind"] == "RecipeResult"


def test_a_recipe_url_is_bundled(run_cli, site: Site, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recipe = run_cli("aicr", "recipe", "--service", "eks", "--accelerator", "h100", "--intent", "training")
    assert recipe.code == 0, recipe.stderr
    site.pages["/recipe.yaml"] = recipe.stdout.encode()
    out = tmp_path / "bundle"
    bundled = run_cli("aicr", "bundle", "--recipe", site.url("/recipe.yaml"), "--deployer", "helmfile", "-o", str(out))
    assert bundled.code == 0, bundled.stderr
    assert (out / "recipe.yaml").read_text() == recipe.stdout


FAILURES = [
    ("not-found", "/missing", 2, "the server answered HTTP 404 Not Found"),
    ("server-error", "/error", 6, "the server answered HTTP 500 Internal Server Error"),
    (
        "too-large",
        "/big",
        2,
        f"input is {LIMIT + 1} bytes, more than the limit of {LIMIT} bytes (raise it with AICR_MAX_INPUT_BYTES)",
    ),
    (
        "too-large-without-length",
        "/endless",
        2,
        f"input goes on, more than the limit of {LIMIT} bytes (raise it with AICR_MAX_INPUT_BYTES)",
    ),
    ("not-utf8", "/latin1", 2, "not UTF-8 text: byte 0xe9 at offset 12 (line 1)"),
    ("nested-too-deep", "/deep", 2, "nested deeper than 100 levels"),
    ("never-answers", "/silent", 5, "no complete answer within 0.5 s (set AICR_HTTP_TIMEOUT to wait longer)"),
    ("trickles", "/trickle", 5, "no complete answer within 0.5 s (set AICR_HTTP_TIMEOUT to wait longer)"),
]


@pytest.mark.parametrize(("path", "code", "message"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
def test_a_failed_fetch_is_one_line_naming_the_url_and_writes_nothing(
    run_cli,  # type: ignore[no-untyped-def]
    site: Site,
    cat_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    code: int,
    message: str,
) -> None:
    monkeypatch.setenv("AICR_MAX_INPUT_BYTES", str(LIMIT))
    monkeypatch.setenv("AICR_HTTP_TIMEOUT", "0.5")
    site.pages["/big"] = site.pages["/endless"] = b"#" * (LIMIT + 1)
    site.pages["/latin1"] = "service: caf\xe9\n".encode("latin-1")
    site.pages["/deep"] = b"spec: " + b"[" * 150 + b"]" * 150 + b"\n"
    out = tmp_path / "out"
    out.mkdir()
    result = run_cli(
        "aicr", "recipe", "--catalog", str(cat_dir), "--criteria", site.url(path), "-o", str(out / "r.yaml")
    )
    assert result.code == code, result.stderr
    line = _only_error_line(result.stderr)
    assert line.startswith((f"error: {site.url(path)}: ", f"error: {site.url(path)}:1: ")), line
    assert message in line
    assert list(out.iterdir()) == []


def test_nothing_listening_is_unavailable(run_cli, cat_dir: Path) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as probe:  # a port that was free a moment ago, and is closed now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/c.yaml"
    result = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--criteria", url)
    assert result.code == 6
    assert _only_error_line(result.stderr).startswith(f"error: {url}: cannot fetch: ")


def test_user_info_and_query_are_sent_but_never_shown(run_cli, site: Site, cat_dir: Path) -> None:  # type: ignore[no-untyped-def]
    site.pages["/c.yaml"] = CRITERIA
    url = site.url("/c.yaml").replace("http://", "http://reader:s3cret@") + "?X-Signature=t0ken"
    assert run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--criteria", url).code == 0
    assert site.authorizations[-1] == "Basic " + base64.b64encode(b"reader:s3cret").decode()
    missing = url.replace("/c.yaml", "/none.yaml")
    result = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--criteria", missing)
    assert result.code == 2
    line = _only_error_line(result.stderr)
    assert line == f"error: {site.url('/none.yaml')}?…: the server answered HTTP 404 Not Found"
    assert "s3cret" not in line and "t0ken" not in line


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http:///c.yaml", "expected http(s)://HOST/PATH"),
        ("http://u:s3cret@127.0.0.1:99999/c.yaml", "not a valid URL: "),
        ("http://u:s3cret@127.0.0.1/a b.yaml", "a URL may not hold spaces or control characters"),
        ("http://u:s3cret@[::1/c.yaml", "not a valid URL: Invalid IPv6 URL"),
    ],
    ids=["no-host", "bad-port", "space", "bad-ipv6"],
)
def test_a_malformed_url_is_refused_before_any_request(run_cli, cat_dir: Path, url: str, message: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--criteria", url)
    assert result.code == 2
    line = _only_error_line(result.stderr)
    assert message in line
    assert "s3cret" not in line


def test_an_output_url_is_refused_before_the_work(run_cli, cat_dir: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--service", "eks", "-o", "https://example.com/r")
    assert result.code == 2
    assert _only_error_line(result.stderr) == (
        "error: https://example.com/r: cannot write to a URL: give a file or cm://NAMESPACE/NAME"
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            "oci://localhost:5000/x",
            "cannot write to oci://: give a file, '-' or cm://NAMESPACE/NAME; only aicr bundle -o pushes to oci://",
        ),
        ("s3://bucket/r.yaml", "cannot write to s3://: give a file, '-' or cm://NAMESPACE/NAME"),
    ],
    ids=["oci", "s3"],
)
def test_an_output_with_another_scheme_is_refused_and_nothing_is_created(  # type: ignore[no-untyped-def]
    run_cli, cat_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.iterdir())
    result = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--service", "eks", "-o", target)
    assert result.code == 2
    assert _only_error_line(result.stderr) == f"error: {target}: {message}"
    assert sorted(tmp_path.iterdir()) == before  # no 'oci:' or 's3:' folder
