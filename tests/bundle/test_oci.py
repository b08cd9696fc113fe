"""Bundles in an OCI registry: ``aicr bundle -o oci://…`` and ``aicr verify oci://…`` against a real registry.

Covers: a pushed bundle is stored in upstream's layout (artifact type, empty config, one gzip tar
layer with oras's annotations, upstream's manifest annotations), read back through the registry's
own HTTP API, its layer holding exactly the files of the same bundle written to a folder; two
pushes of one bundle give one digest; an untagged push takes the program's version as its tag;
nothing is left on the disk (no ``oci:`` folder, no scratch folder); ``verify oci://`` pulls and
passes by tag and by digest; a tampered blob in the registry's storage and a bundle pushed with a
changed file each fail with exit 1 naming what differs; an artifact of another type is refused
(exit 2); bad references exit 2 with one line before anything is read or written, and a recipe
that cannot be bundled pushes nothing; an unreachable
registry (exit 6), a missing tag (exit 3) and a registry that wants credentials (exit 4) are one
line each; a registry that hands out bearer tokens (as ghcr.io does) gets one for each scope it
asks for and takes the bundle. Unpacking refuses links and paths that climb out of the bundle; the scratch folder is
removed even when the work in it fails; only the ``oci://`` path imports oras.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared import __version__, errors, files
from shared.bundle import checksums, oci, registry
from tests.bundle import bundles, oci_registry
from tests.bundle.oci_registry import Registry

SHA = "sha256:" + "0" * 64


@pytest.fixture(scope="module")
def reg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with oci_registry.running(tmp_path_factory.mktemp("registry")) as running:
        yield running


@pytest.fixture(scope="module")
def recipe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bundles.write_recipe(tmp_path_factory.mktemp("oci-recipe") / "recipe.yaml", **bundles.SEED)


def _push(run_cli, recipe: Path, target: str, *extra: str):  # type: ignore[no-untyped-def]
    return run_cli("aicr", "bundle", "-r", str(recipe), "-o", target, "--plain-http", *extra)


def _scratch_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob(".aicr-*")}


def _tar_members(blob: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        return {m.name: m for m in tar.getmembers()}


def _tar_files(blob: bytes) -> dict[str, bytes]:
    found = {}
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        for member in tar.getmembers():
            if member.isfile():
                handle = tar.extractfile(member)
                assert handle is not None
                found[member.name] = handle.read()
    return found


def test_a_pushed_bundle_is_stored_in_upstreams_layout(  # type: ignore[no-untyped-def]
    run_cli, reg: Registry, recipe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    before = _scratch_folders()
    result = _push(run_cli, recipe, reg.ref("team/stack", "v1"), "-d", "flux")
    assert result.code == 0, result.stderr
    manifest, stored_digest = reg.manifest("team/stack", "v1")
    lines = result.stdout.splitlines()
    assert f"Pushed to: {reg.ref('team/stack', 'v1')}" in lines
    assert f"Digest: {stored_digest}" in lines
    assert f"Verify: aicr verify --plain-http oci://{reg.host}/team/stack@{stored_digest}" in lines

    assert manifest["schemaVersion"] == 2
    assert manifest["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
    assert manifest["artifactType"] == "application/vnd.nvidia.aicr.artifact"
    assert manifest["config"] == {
        "mediaType": "application/vnd.oci.empty.v1+json",
        "digest": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
        "size": 2,
        "data": "e30=",
    }
    assert manifest["annotations"] == {
        "org.opencontainers.image.created": "1970-01-01T00:00:00Z",
        "org.opencontainers.image.version": __version__,
        "org.opencontainers.image.vendor": oci.VENDOR,
        "org.opencontainers.image.title": "AICR Bundle",
        "org.opencontainers.image.source": oci.SOURCE,
    }
    layers = manifest["layers"]
    assert isinstance(layers, list) and len(layers) == 1
    layer = layers[0]
    assert layer["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip"
    blob, _ = reg.get(f"team/stack/blobs/{layer['digest']}", accept="*/*")
    assert (layer["size"], layer["digest"]) == (len(blob), "sha256:" + hashlib.sha256(blob).hexdigest())
    assert layer["annotations"] == {
        "org.opencontainers.image.title": ".",
        "io.deis.oras.content.digest": "sha256:" + hashlib.sha256(gzip.decompress(blob)).hexdigest(),
        "io.deis.oras.content.unpack": "true",
    }

    # The layer is the same bundle `aicr bundle -o DIR` writes, rooted at '.' as oras adds a folder.
    local = tmp_path / "local"
    bundles.make_bundle(recipe, local, "flux")
    members = _tar_members(blob)
    assert next(iter(members)) == "."
    assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 and not m.uname for m in members.values())
    expected = {rel: (local / rel).read_bytes() for rel in checksums.bundle_files(local)}
    assert _tar_files(blob) == expected
    assert [p.name for p in tmp_path.iterdir()] == ["local"], "nothing but the local bundle (no 'oci:' folder)"
    assert _scratch_folders() <= before


def test_the_same_bundle_pushed_twice_has_one_digest_and_an_untagged_push_takes_the_version(  # type: ignore[no-untyped-def]
    run_cli, reg: Registry, recipe: Path
) -> None:
    assert _push(run_cli, recipe, reg.ref("repeat/bundle", "first")).code == 0
    assert _push(run_cli, recipe, reg.ref("repeat/bundle")).code == 0
    tags, _ = reg.get("repeat/bundle/tags/list", accept="application/json")
    assert sorted(json.loads(tags)["tags"]) == sorted(["first", oci.default_tag(__version__)])
    assert reg.manifest("repeat/bundle", "first")[1] == reg.manifest("repeat/bundle", __version__)[1]


def test_verify_pulls_the_bundle_by_tag_and_by_digest_and_passes(  # type: ignore[no-untyped-def]
    run_cli, reg: Registry, recipe: Path
) -> None:
    assert _push(run_cli, recipe, reg.ref("pulled/bundle", "v2")).code == 0
    _, digest = reg.manifest("pulled/bundle", "v2")
    listed = len(_tar_files(reg.get(f"pulled/bundle/blobs/{_layer_digest(reg, 'pulled/bundle', 'v2')}")[0])) - 1
    for target in (reg.ref("pulled/bundle", "v2"), f"oci://{reg.host}/pulled/bundle@{digest}"):
        result = run_cli("aicr", "verify", "--plain-http", target)
        assert (result.code, result.stderr) == (0, "")
        assert result.stdout == (
            f"Pulled {target} ({digest})\nChecksums verified ({listed} files)\nBundle verification: PASSED\n"
        )


def _layer_digest(reg: Registry, repository: str, tag: str) -> str:
    manifest, _ = reg.manifest(repository, tag)
    layers = manifest["layers"]
    assert isinstance(layers, list)
    return str(layers[0]["digest"])


def test_a_tampered_blob_in_the_registry_fails_verify_with_exit_1(  # type: ignore[no-untyped-def]
    run_cli, reg: Registry, recipe: Path
) -> None:
    assert _push(run_cli, recipe, reg.ref("tampered/blob", "v1")).code == 0
    digest = _layer_digest(reg, "tampered/blob", "v1")
    stored = reg.blob_file(digest)
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size: the registry serves it as the blob it was
    stored.write_bytes(bytes(data))
    result = run_cli("aicr", "verify", "--plain-http", reg.ref("tampered/blob", "v1"))
    assert result.code == 1
    lines = result.stdout.splitlines()
    assert f"tampered: layer {digest}: content has digest sha256:{hashlib.sha256(data).hexdigest()}" in lines
    assert lines[-1].startswith("Bundle verification: FAILED")
    assert result.stderr == ""


def test_a_bundle_pushed_with_a_changed_file_fails_verify_naming_the_file(  # type: ignore[no-untyped-def]
    run_cli, reg: Registry, recipe: Path, tmp_path: Path
) -> None:
    local = tmp_path / "b"
    bundles.make_bundle(recipe, local, "helm")
    (local / "README.md").write_text("changed after checksums.txt was written\n")
    reference = oci.parse(reg.ref("tampered/file", "v1"), where="test")
    with files.scratch_directory(".aicr-test-") as scratch:
        registry.push(oci.pack(local, version="0"), reference, scratch=scratch, plain_http=True, insecure_tls=False)
    result = run_cli("aicr", "verify", "--plain-http", reg.ref("tampered/file", "v1"))
    assert result.code == 1
    assert "changed: README.md" in result.stdout.splitlines()
    assert "tampered:" not in result.stdout, "the layer itself is what its manifest says"


def test_an_artifact_of_another_type_is_not_a_bundle_and_exits_2(  # type: ignore[no-untyped-def]
    run_cli, reg: Registry, tmp_path: Path
) -> None:
    layer = gzip.compress(b"not a bundle", mtime=0)
    manifest = {
        "schemaVersion": 2,
        "mediaType": oci.MANIFEST_MEDIA_TYPE,
        "artifactType": "application/vnd.example.other",
        "config": oci.descriptor(oci.EMPTY_MEDIA_TYPE, oci.EMPTY_DATA),
        "layers": [oci.descriptor(oci.LAYER_MEDIA_TYPE, layer)],
    }
    artifact = oci.Artifact(layer=layer, config=oci.EMPTY_DATA, manifest=json.dumps(manifest).encode())
    reference = oci.parse(reg.ref("other/artifact", "v1"), where="test")
    with files.scratch_directory(".aicr-test-") as scratch:
        registry.push(artifact, reference, scratch=scratch, plain_http=True, insecure_tls=False)
    result = run_cli("aicr", "verify", "--plain-http", reg.ref("other/artifact", "v1"))
    assert result.code == 2
    assert result.stderr == (
        f"error: {reg.ref('other/artifact', 'v1')}: not an aicr bundle: artifact type "
        "'application/vnd.example.other', expected 'application/vnd.nvidia.aicr.artifact'\n"
    )


BAD_REFERENCES = [
    ("no-registry-host", "oci://bundle", "name the registry host"),
    ("no-repository", "oci://localhost:5000", "name the registry host"),
    ("upper-case-repository", "oci://localhost:5000/Team/bundle", "expected oci://REGISTRY[:PORT]/REPOSITORY[:TAG]"),
    ("bad-tag", "oci://localhost:5000/team/bundle:-v1", "expected oci://REGISTRY[:PORT]/REPOSITORY[:TAG]"),
    ("space", "oci://localhost:5000/team bundle", "expected oci://REGISTRY[:PORT]/REPOSITORY[:TAG]"),
    ("short-digest", "oci://localhost:5000/team/bundle@sha256:abc", "expected oci://REGISTRY[:PORT]/REPOSITORY"),
    ("push-to-digest", f"oci://localhost:5000/team/bundle@{SHA}", "a bundle is pushed to a tag, not a digest"),
]


@pytest.mark.parametrize(("target", "message"), [c[1:] for c in BAD_REFERENCES], ids=[c[0] for c in BAD_REFERENCES])
def test_a_bad_reference_exits_2_with_one_line_and_writes_nothing(  # type: ignore[no-untyped-def]
    run_cli, recipe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = _push(run_cli, recipe, target)
    assert result.code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"error: --output: invalid OCI reference {target!r}: ")
    assert message in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_recipe_that_cannot_be_bundled_pushes_nothing(  # type: ignore[no-untyped-def]
    run_cli, reg: Registry, tmp_path: Path
) -> None:
    result = _push(run_cli, tmp_path / "absent.yaml", reg.ref("never/bundled", "v1"))
    assert result.code == 2
    assert result.stderr.count("\n") == 1
    catalog, _ = reg.get("_catalog", accept="application/json")
    assert "never/bundled" not in json.loads(catalog)["repositories"]


def test_a_bad_reference_to_verify_exits_2_with_one_line(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("aicr", "verify", "oci://Registry.example.com/Bundle")
    assert result.code == 2
    assert result.stderr.startswith("error: DIRECTORY: invalid OCI reference 'oci://Registry.example.com/Bundle': ")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("oci://localhost:5000/b", ("localhost:5000", "b", "dflt", None)),
        ("oci://localhost/b", ("localhost", "b", "dflt", None)),
        ("oci://ghcr.io/nvidia/aicr/bundle:v0.11.1", ("ghcr.io", "nvidia/aicr/bundle", "v0.11.1", None)),
        ("oci://[::1]:5000/a/b_c__d-e.f:T_1", ("[::1]:5000", "a/b_c__d-e.f", "T_1", None)),
        (f"oci://r.example.com/b@{SHA}", ("r.example.com", "b", None, SHA)),
        (f"OCI://r.example.com/b:t@{SHA}", ("r.example.com", "b", "t", SHA)),
    ],
    ids=["port", "localhost", "nested", "ipv6-separators", "digest", "tag-and-digest"],
)
def test_valid_references_are_taken_apart_by_the_distribution_grammar(
    text: str, expected: tuple[str, str, str | None, str | None]
) -> None:
    ref = oci.parse(text, where="test", default_tag="dflt")
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == expected


def test_the_default_tag_is_the_version_made_a_valid_tag() -> None:
    assert oci.default_tag("0.1.0") == "0.1.0"
    assert oci.default_tag("0.2.0+local.3") == "0.2.0-local.3"


def test_an_unreachable_registry_is_one_line_and_exit_6(run_cli, recipe: Path) -> None:  # type: ignore[no-untyped-def]
    port = oci_registry.free_port()  # nothing listens there once the probe socket is closed
    target = f"oci://127.0.0.1:{port}/team/bundle:v1"
    for result in (_push(run_cli, recipe, target), run_cli("aicr", "verify", "--plain-http", target)):
        assert result.code == 6
        assert result.stderr == f"error: {target}: cannot reach registry 127.0.0.1:{port} (connection refused)\n"


def test_a_missing_tag_is_not_found_exit_3(run_cli, reg: Registry) -> None:  # type: ignore[no-untyped-def]
    target = reg.ref("never/pushed", "v9")
    result = run_cli("aicr", "verify", "--plain-http", target)
    assert result.code == 3
    assert result.stderr.startswith(f"error: {target}: pull of manifest 'v9': not found (404 ")
    assert result.stderr.count("\n") == 1


def test_a_registry_that_wants_credentials_is_unauthorized_exit_4(  # type: ignore[no-untyped-def]
    run_cli, recipe: Path, tmp_path: Path
) -> None:
    with oci_registry.running(tmp_path / "locked", htpasswd=True) as locked:
        target = locked.ref("team/bundle", "v1")
        hint = f": log in with 'docker login {locked.host}' or check the repository's permissions\n"
        pushed = _push(run_cli, recipe, target)
        assert pushed.code == 4
        # The first request of a push asks whether the config blob is there (HEAD: no error body).
        assert pushed.stderr == (
            f"error: {target}: HEAD /v2/team/bundle/blobs/{oci.sha256_digest(oci.EMPTY_DATA)} was refused "
            f"(401 Unauthorized){hint}"
        )
        pulled = run_cli("aicr", "verify", "--plain-http", target)
        assert pulled.code == 4
        assert pulled.stderr == (
            f"error: {target}: GET /v2/team/bundle/manifests/v1 was refused "
            f"(401 UNAUTHORIZED: authentication required){hint}"
        )


def test_a_registry_that_hands_out_bearer_tokens_gets_one_per_scope_and_takes_the_bundle(  # type: ignore[no-untyped-def]
    run_cli, recipe: Path, tmp_path: Path
) -> None:
    tokens = oci_registry.TokenServer(tmp_path)
    with tokens.serving() as realm, oci_registry.running(tmp_path / "tokened", token=(realm, tokens.cert_path)) as reg:
        target = reg.ref("team/bundle", "v1")
        pushed = _push(run_cli, recipe, target)
        assert (pushed.code, pushed.stderr) == (0, "")
        # The first request (is the config blob there?) is granted pull; uploading needs a new
        # token for push as well, asked for once and then reused.
        # (The registry lists a scope's actions in no fixed order.)
        asked = [(scope.rpartition(":")[0], sorted(scope.rpartition(":")[2].split(","))) for scope in tokens.scopes]
        assert asked == [("repository:team/bundle", ["pull"]), ("repository:team/bundle", ["pull", "push"])]
        verified = run_cli("aicr", "verify", "--plain-http", target)
        assert (verified.code, verified.stderr) == (0, "")
        assert verified.stdout.endswith("Bundle verification: PASSED\n")


def _layer_of(*members: tuple[tarfile.TarInfo, bytes]) -> tuple[oci.Layer, bytes]:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, data in members:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)
    blob = gzip.compress(buffer.getvalue(), mtime=0)
    return oci.Layer(digest=oci.sha256_digest(blob), size=len(blob)), blob


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o644
    return info


def test_unpacking_refuses_links_and_paths_that_climb_out(tmp_path: Path) -> None:
    layer, blob = _layer_of(
        (_member("./checksums.txt"), b""),
        (_member("../escaped.txt"), b"x"),
        (_member("/etc/absolute.txt"), b"x"),
        (_member("link", tarfile.SYMTYPE, "/etc/passwd"), b""),
        (_member("hard", tarfile.LNKTYPE, "checksums.txt"), b""),
        (_member("ok/file.txt"), b"fine\n"),
    )
    dest = tmp_path / "out" / "bundle"
    problems = oci.unpack(layer, blob, dest)
    assert problems == [
        "refused member '../escaped.txt': its path leaves the bundle",
        "refused member '/etc/absolute.txt': its path leaves the bundle",
        "refused member 'link': not a regular file or folder",
        "refused member 'hard': not a regular file or folder",
    ]
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["out/bundle/checksums.txt", "out/bundle/ok/file.txt"]


def test_a_layer_that_is_not_gzip_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    blob = b"plain bytes"
    problems = oci.unpack(oci.Layer(digest=oci.sha256_digest(blob), size=len(blob)), blob, tmp_path / "b")
    assert len(problems) == 1 and "not a gzip stream" in problems[0]


def test_the_scratch_folder_is_removed_even_when_the_work_in_it_fails() -> None:
    with pytest.raises(errors.InvalidInput), files.scratch_directory(".aicr-test-") as scratch:
        files.write_staged(scratch / "a" / "b.txt", "x")
        kept = scratch
        raise errors.InvalidInput("stop")
    assert not kept.exists()


_PROBE = """
import json, sys
from shared import cli
from aicr.main import build_app
code = cli.run(build_app(), "aicr", sys.argv[1:])
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "oras": "oras" in sys.modules}))
"""


def _loads_oras(*argv: str) -> tuple[int, bool]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=120, check=False
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return report["code"], report["oras"]


def test_only_the_oci_path_imports_oras(recipe: Path, tmp_path: Path) -> None:
    assert _loads_oras("bundle", "-r", str(recipe), "-o", str(tmp_path / "b")) == (0, False)
    assert _loads_oras("verify", str(tmp_path / "b")) == (0, False)
    port = oci_registry.free_port()
    assert _loads_oras("verify", "--plain-http", f"oci://127.0.0.1:{port}/x") == (6, True)
