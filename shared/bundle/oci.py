"""A bundle as an OCI artifact: the ``oci://`` reference grammar, and the one-layer artifact upstream AICR pushes.

Upstream (``pkg/oci``, oras-go) packs the whole bundle folder into one reproducible gzip tar layer
(oras's file store adding the folder as ``.``), with no config (the OCI 1.1 empty descriptor), the
artifact type ``application/vnd.nvidia.aicr.artifact`` and manifest annotations
``org.opencontainers.image.created=1970-01-01T00:00:00Z``, ``…version``, ``…vendor``, ``…title`` and
``…source``. We write the same layout, so ``oras pull`` and upstream tooling read our artifacts and
we read theirs: the tar holds ``.`` and every folder and file below it in lexical walk order, with
modes kept, owners and times zeroed; the layer carries oras's annotations (title ``.``, the digest of
the uncompressed tar, unpack ``true``). Two packs of the same bundle are byte-identical, so the
manifest digest names the bundle's content.

Pure: no network, nothing written but by the caller. The registry client is ``registry``; the
commands that combine the two are in ``publish``. Unpacking refuses what a bundle never holds
(links, devices, paths that climb out, more than ``MAX_UNPACKED_BYTES``) and reports each such
member as a problem, so a hostile or damaged artifact is a failed verification, not a crash.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from shared import errors, files, grammars
from shared.bundle import paths

SCHEME = "oci://"
ARTIFACT_TYPE = "application/vnd.nvidia.aicr.artifact"
MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
LAYER_MEDIA_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
EMPTY_DATA = b"{}"
"""The OCI 1.1 empty descriptor's content, the config of an artifact that has none."""

CREATED = "1970-01-01T00:00:00Z"
"""Upstream's fixed creation time, so the manifest does not change with the clock."""
TITLE = "AICR Bundle"
VENDOR = "dsx-cluster-tools"
SOURCE = "https://github.com/dsx-cluster-tools/dsx-cluster-tools"

ANNOTATION_CREATED = "org.opencontainers.image.created"
ANNOTATION_VERSION = "org.opencontainers.image.version"
ANNOTATION_VENDOR = "org.opencontainers.image.vendor"
ANNOTATION_TITLE = "org.opencontainers.image.title"
ANNOTATION_SOURCE = "org.opencontainers.image.source"
ANNOTATION_CONTENT_DIGEST = "io.deis.oras.content.digest"
"""oras's annotation: the digest of the layer's uncompressed tar."""
ANNOTATION_UNPACK = "io.deis.oras.content.unpack"
LAYER_TITLE = "."
"""oras names a folder layer by the name it was added under; upstream adds the bundle as ``.``."""

MAX_MANIFEST_BYTES = 4 * 1024 * 1024
"""The distribution registry's own limit on a manifest (``defaultMaxManifestBodySize``)."""
MAX_UNPACKED_BYTES = 512 * 1024 * 1024
"""Largest uncompressed layer we unpack: the biggest bundle (every component of upstream's catalog,
kgateway's 10,000-line CRDs included) is under 5 MB, so this only stops a decompression bomb."""

_NAME_MAX = 255
"""distribution/reference's limit on the length of a repository name (``NameTotalLengthMax``)."""
_IMAGE = re.compile(grammars.IMAGE_FMT)
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_TAG_CHARACTERS = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class Reference:
    """``oci://REGISTRY/REPOSITORY[:TAG][@DIGEST]`` taken apart (a dataclass: ``aicr verify DIR``
    imports this module only to tell a folder from a reference, so it defines no pydantic model)."""

    registry: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def name(self) -> str:
        """``REGISTRY/REPOSITORY``, as ``docker`` and ``oras`` spell a repository."""
        return f"{self.registry}/{self.repository}"

    @property
    def plain(self) -> str:
        """The reference without the scheme: ``REGISTRY/REPOSITORY:TAG`` (or ``@DIGEST``)."""
        text = self.name
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text

    @property
    def text(self) -> str:
        return SCHEME + self.plain

    @property
    def manifest_ref(self) -> str:
        """What to ask the registry's ``/manifests/`` for: the digest when given, else the tag."""
        return self.digest or self.tag or ""


def is_reference(text: str) -> bool:
    """True for an ``oci://`` target (any case of the scheme, so ``OCI://`` is not taken for a folder)."""
    return text[: len(SCHEME)].lower() == SCHEME


def _has_registry(first: str) -> bool:
    """distribution/reference's rule: a first component is a registry host when it has a '.' or a
    port, or is ``localhost``; otherwise docker would push to Docker Hub, which we never guess."""
    return "." in first or ":" in first or first == "localhost" or first.startswith("[")


def parse(text: str, *, where: str, default_tag: str | None = None, allow_digest: bool = True) -> Reference:
    """Parse an ``oci://`` reference by the distribution reference grammar.

    The registry host is required; a reference without a tag gets ``default_tag``. Raises
    InvalidInput naming ``where`` and the rule broken."""
    if not is_reference(text):
        raise errors.InvalidInput(f"expected an oci://REGISTRY/REPOSITORY[:TAG] reference, got {text!r}", where=where)
    body = text[len(SCHEME) :]
    match = _IMAGE.fullmatch(body)
    if match is None:
        raise errors.InvalidInput(
            f"invalid OCI reference {text!r}: expected oci://REGISTRY[:PORT]/REPOSITORY[:TAG], the repository of "
            "lower case letters, digits and '.', '_', '__' or '-' between them, the tag of at most 128 letters, "
            "digits, '.', '_' or '-'",
            where=where,
        )
    name = match.group("name")
    first, slash, repository = name.partition("/")
    if not slash or not _has_registry(first):
        raise errors.InvalidInput(
            f"invalid OCI reference {text!r}: name the registry host (e.g. 'oci://localhost:5000/{name}')",
            where=where,
        )
    if len(repository) > _NAME_MAX:
        raise errors.InvalidInput(
            f"invalid OCI reference {text!r}: the repository name is longer than {_NAME_MAX} characters", where=where
        )
    rest = body[len(name) :]
    tag_part, at, digest = rest.partition("@")
    tag = tag_part.removeprefix(":") or None
    if at and not _DIGEST.fullmatch(digest):
        raise errors.InvalidInput(
            f"invalid OCI reference {text!r}: a digest is 'sha256:' and 64 lower case hex digits", where=where
        )
    if at and not allow_digest:
        raise errors.InvalidInput(
            f"invalid OCI reference {text!r}: a bundle is pushed to a tag, not a digest (the registry computes it)",
            where=where,
        )
    if tag is None and not at:
        tag = default_tag
    return Reference(registry=first, repository=repository, tag=tag, digest=digest if at else None)


def default_tag(version: str) -> str:
    """Upstream tags an untagged push with the CLI version; a character a tag cannot hold becomes '-'."""
    return _TAG_CHARACTERS.sub("-", version)[:128].lstrip(".-") or "latest"


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def descriptor(media_type: str, data: bytes, annotations: dict[str, str] | None = None) -> dict[str, object]:
    """An OCI content descriptor of ``data`` (field order as oras-go marshals it)."""
    found: dict[str, object] = {"mediaType": media_type, "digest": sha256_digest(data), "size": len(data)}
    if annotations:
        found["annotations"] = annotations
    return found


@dataclass(frozen=True)
class Artifact:
    """A packed bundle: the blobs to upload and the manifest that ties them together."""

    layer: bytes
    config: bytes
    manifest: bytes

    @property
    def digest(self) -> str:
        """The manifest digest: the artifact's immutable name in any registry."""
        return sha256_digest(self.manifest)


def _walk(root: Path) -> list[tuple[str, Path]]:
    """Every folder and file below ``root`` as oras-go's ``filepath.Walk`` visits them: lexical order,
    a folder before what it holds. A link or special file is refused: a bundle is written with none."""
    found: list[tuple[str, Path]] = []

    def visit(folder: Path, prefix: str) -> None:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            rel = f"{prefix}{entry.name}"
            if entry.is_symlink() or not (entry.is_dir() or entry.is_file()):
                raise errors.InvalidInput("a bundle holds only folders and regular files", where=entry.path)
            found.append((rel, Path(entry.path)))
            if entry.is_dir():
                visit(Path(entry.path), f"{rel}/")

    visit(root, "")
    return found


def _tar(root: Path) -> bytes:
    import tarfile  # here, not at the top: a bundle written to a folder only asks is_reference

    buffer = io.BytesIO()
    with tarfile.TarFile(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, path in [(LAYER_TITLE, root), *_walk(root)]:
            info = tarfile.TarInfo(rel)
            info.mode = path.stat().st_mode & 0o777
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if path.is_dir():
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                data = files.read_bytes(path)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def manifest_annotations(version: str) -> dict[str, str]:
    """The manifest annotations upstream writes (keys sorted, as Go marshals a map)."""
    return dict(
        sorted(
            {
                ANNOTATION_CREATED: CREATED,
                ANNOTATION_VERSION: version,
                ANNOTATION_VENDOR: VENDOR,
                ANNOTATION_TITLE: TITLE,
                ANNOTATION_SOURCE: SOURCE,
            }.items()
        )
    )


def pack(root: Path, *, version: str) -> Artifact:
    """The artifact of the bundle folder ``root``: deterministic bytes, nothing written."""
    import gzip

    tar = _tar(root)
    layer = gzip.compress(tar, compresslevel=9, mtime=0)
    layer_annotations = {
        ANNOTATION_CONTENT_DIGEST: sha256_digest(tar),
        ANNOTATION_UNPACK: "true",
        ANNOTATION_TITLE: LAYER_TITLE,
    }
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": ARTIFACT_TYPE,
        "config": descriptor(EMPTY_MEDIA_TYPE, EMPTY_DATA) | {"data": "e30="},
        "layers": [descriptor(LAYER_MEDIA_TYPE, layer, dict(sorted(layer_annotations.items())))],
        "annotations": manifest_annotations(version),
    }
    body = json.dumps(manifest, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return Artifact(layer=layer, config=EMPTY_DATA, manifest=body)


@dataclass(frozen=True)
class Layer:
    """The bundle layer a manifest names."""

    digest: str
    size: int
    content_digest: str | None = None


def bundle_layer(manifest: bytes, *, where: str) -> Layer:
    """The one bundle layer of an aicr artifact's manifest.

    Raises InvalidInput when the manifest is not JSON, not an aicr bundle (another artifact type)
    or holds no single gzip tar layer: the reference names something else, not a damaged bundle."""
    document = files.loads_json(files.decode(manifest, where=where), source=where)
    if not isinstance(document, dict):
        raise errors.InvalidInput("the manifest is not a JSON object", where=where)
    kind = document.get("artifactType") or (document.get("config") or {}).get("mediaType")
    if kind != ARTIFACT_TYPE:
        raise errors.InvalidInput(
            f"not an aicr bundle: artifact type {kind!r}, expected {ARTIFACT_TYPE!r}", where=where
        )
    layers = [layer for layer in document.get("layers") or [] if isinstance(layer, dict)]
    bundles = [layer for layer in layers if layer.get("mediaType") == LAYER_MEDIA_TYPE]
    if len(bundles) != 1 or len(layers) != 1:
        raise errors.InvalidInput(
            f"an aicr bundle has one {LAYER_MEDIA_TYPE} layer; this manifest has {len(layers)} layers", where=where
        )
    layer = bundles[0]
    digest, size = layer.get("digest"), layer.get("size")
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest) or not isinstance(size, int) or size < 0:
        raise errors.InvalidInput("the bundle layer has no sha256 digest and size", where=where)
    if size > MAX_UNPACKED_BYTES:
        raise errors.InvalidInput(f"the bundle layer is larger than {MAX_UNPACKED_BYTES} bytes ({size})", where=where)
    content = (layer.get("annotations") or {}).get(ANNOTATION_CONTENT_DIGEST)
    return Layer(digest=digest, size=size, content_digest=content if isinstance(content, str) else None)


def _gunzip(blob: bytes) -> bytes:
    """The uncompressed layer, refused past ``MAX_UNPACKED_BYTES`` (a decompression bomb stops early)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = inflater.decompress(blob, MAX_UNPACKED_BYTES + 1)
    if len(out) > MAX_UNPACKED_BYTES:
        raise ValueError(f"the layer unpacks to more than {MAX_UNPACKED_BYTES} bytes")
    if not inflater.eof:
        raise ValueError("the layer's gzip stream is truncated")
    return out + inflater.flush()


def layer_problems(layer: Layer, blob: bytes) -> list[str]:
    """Why ``blob`` is not the layer the manifest names (empty when it is)."""
    problems = []
    if len(blob) != layer.size:
        problems.append(f"layer {layer.digest}: {len(blob)} bytes, the manifest says {layer.size}")
    got = sha256_digest(blob)
    if got != layer.digest:
        problems.append(f"layer {layer.digest}: content has digest {got}")
    return problems


def unpack(layer: Layer, blob: bytes, dest: Path) -> list[str]:
    """Write the bundle held in ``blob`` below ``dest``; returns the problems found (empty when none).

    A member that is not a folder or regular file, a path that climbs out, a tar that does not
    match the manifest's content digest or does not parse is a problem, and nothing more of it is
    written; what was written is only ever below ``dest``."""
    import tarfile

    try:
        tar_bytes = _gunzip(blob)
    except (ValueError, zlib.error) as exc:
        return [f"layer {layer.digest}: not a gzip stream ({exc})"]
    problems = []
    if layer.content_digest is not None and sha256_digest(tar_bytes) != layer.content_digest:
        problems.append(f"layer {layer.digest}: the tar's digest is not its {ANNOTATION_CONTENT_DIGEST} annotation")
    seen: set[str] = set()
    try:
        with tarfile.TarFile(fileobj=io.BytesIO(tar_bytes)) as tar:
            for member in tar:
                name = member.name.removeprefix("./").rstrip("/")
                if name in ("", "."):
                    continue
                try:
                    rel = paths.safe_relpath(name)
                except errors.InvalidInput:
                    problems.append(f"refused member {member.name!r}: its path leaves the bundle")
                    continue
                if member.isdir():
                    continue
                if not member.isreg():
                    problems.append(f"refused member {rel!r}: not a regular file or folder")
                    continue
                if rel in seen:
                    problems.append(f"refused member {rel!r}: stored twice")
                    continue
                seen.add(rel)
                handle = tar.extractfile(member)
                data = handle.read() if handle is not None else b""
                files.write_staged(paths.safe_join(dest, rel), data, mode=0o755 if member.mode & 0o100 else 0o644)
    except tarfile.TarError as exc:
        problems.append(f"layer {layer.digest}: not a tar archive ({exc})")
    return problems
