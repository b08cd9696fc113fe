"""Catalogs: the shipped one, an external one (``--catalog``), and one layered over another (``--data``).

A catalog is a folder: ``registry.yaml`` (ComponentRegistry), ``overlays/*.yaml`` (RecipeMetadata;
``base.yaml`` is the root), ``mixins/*.yaml`` (RecipeMixin), ``components/<name>/values*.yaml`` and
``components/<name>/manifests/*``. Our files (``aicr.run/v1alpha2``) are strict; upstream AICR's
(``aicr.nvidia.com/v1alpha1``) read the same, with unknown keys reported as warnings.

Parsing ~40 YAML files costs more than the rest of ``aicr recipe`` together, so the parsed form of a
folder is kept as JSON in the user's cache, keyed by a hash of the folder's content: YAML stays the
source, and a changed file simply misses the cache.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from shared import cachedir, errors, files, yamlio
from shared.recipe.vocabulary import API_VERSION, API_VERSIONS

if TYPE_CHECKING:  # the models (and pydantic) load only when a catalog is read and checked
    from pydantic import BaseModel

    from shared.recipe import models

logger = logging.getLogger(__name__)

EMBEDDED = "embedded catalog"
CACHE_FORMAT = "1"
MAX_FILE_BYTES = 10 * 1024 * 1024
REGISTRY_FILE = "registry.yaml"
BASE_NAME = "base"
_SKIPPED_DIRS = ("checks/", "validators/")


@dataclass
class Files:
    """A catalog's files, and where each of its objects came from: what a catalog in either form
    (checked models here, plain data in ``shared.recipe.compiled``) answers alike."""

    files: dict[str, Path] = field(default_factory=dict)
    parsed: dict[str, Any] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    label: str = EMBEDDED

    def where(self, key: str) -> str:
        """The file an object came from, for error messages (``overlay:eks`` → path)."""
        return self.origin.get(key, self.label)

    def has_file(self, relpath: str) -> bool:
        return _normalise(relpath) in self.files

    def values(self, relpath: str) -> dict[str, Any]:
        """The parsed content of a values file; a missing file is invalid input."""
        key = _normalise(relpath)
        if key not in self.files:
            raise errors.InvalidInput(f"values file {relpath!r} does not exist in the catalog")
        data = self.parsed.get(key)
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise errors.InvalidInput("a values file must hold a mapping", where=str(self.files[key]))
        return data

    def _layered_files(self, top: Files) -> dict[str, Any]:
        """The fields of this catalog's files with ``top``'s over them (the later one wins)."""
        return {
            "files": {**self.files, **top.files},
            "parsed": {**self.parsed, **top.parsed},
            "origin": {**self.origin, **top.origin},
            "label": f"{self.label} + {top.label}",
        }


@dataclass
class Catalog(Files):
    """Everything one resolution reads, as checked models, each remembering the file it came from."""

    registry: dict[str, models.RegistryComponent] = field(default_factory=dict)
    base: models.RecipeMetadata | None = None
    overlays: dict[str, models.RecipeMetadata] = field(default_factory=dict)
    mixins: dict[str, models.RecipeMixin] = field(default_factory=dict)

    def layered(self, top: Catalog) -> Catalog:
        """This catalog with ``top`` over it: registry entries by name, overlays and mixins by
        name, files by path; the later one wins."""
        return Catalog(
            registry={**self.registry, **top.registry},
            base=top.base or self.base,
            overlays={**self.overlays, **top.overlays},
            mixins={**self.mixins, **top.mixins},
            **self._layered_files(top),
        )


def _normalise(relpath: str) -> str:
    return str(PurePosixPath(relpath.replace("\\", "/")))


def walk(root: Path, *, external: bool) -> list[tuple[str, Path]]:
    """Every file below ``root`` as (posix relative path, absolute path), sorted; a folder that
    is not there is invalid input."""
    if not root.is_dir():
        raise errors.InvalidInput("catalog directory does not exist", where=str(root))
    found: list[tuple[str, Path]] = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            if external:
                if path.is_symlink():
                    raise errors.InvalidInput("symbolic links are not allowed in a catalog", where=str(path))
                if path.stat().st_size > MAX_FILE_BYTES:
                    raise errors.InvalidInput("file is larger than 10 MiB", where=str(path))
            found.append((rel, path))
    return found


def _is_document(rel: str) -> bool:
    return rel.endswith((".yaml", ".yml")) and "/manifests/" not in f"/{rel}" and not rel.startswith(_SKIPPED_DIRS)


def digest(entries: list[tuple[str, Path]]) -> str:
    """The hash of a catalog folder's content (``walk``'s entries): the key of its caches."""
    digest = hashlib.sha256(f"{CACHE_FORMAT}\0".encode())
    for rel, path in entries:
        digest.update(rel.encode())
        digest.update(b"\0")
        digest.update(files.sha256(path).encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _parse_documents(entries: list[tuple[str, Path]], digest: str) -> dict[str, Any]:
    """Parse every YAML document of the folder, through the content-keyed JSON cache."""
    documents = [(rel, path) for rel, path in entries if _is_document(rel)]
    cache_file = cachedir.user_cache(f"catalog-{digest}.json")
    if cache_file.is_file():
        try:
            cached: dict[str, Any] = json.loads(cache_file.read_text(encoding="utf-8"))
            return cached
        except (OSError, ValueError):
            logger.debug("catalog cache unreadable, parsing the YAML again", extra={"cache": str(cache_file)})
    parsed = {rel: yamlio.loads(yamlio.read_text(path), source=str(path)) for rel, path in documents}
    _store_cache(cache_file, parsed)
    return parsed


def _store_cache(cache_file: Path, parsed: dict[str, Any]) -> None:
    try:
        text = json.dumps(parsed)
        if json.loads(text) != parsed:
            return  # JSON would give a value back changed (a number key as text): parse each time
    except (TypeError, ValueError):
        return  # a value JSON cannot hold (a YAML timestamp); parse the YAML each time instead
    try:
        files.program_folder(cache_file.parent)
        files.atomic_write_text(cache_file, text)
    except (OSError, errors.ToolError):
        logger.debug("catalog cache not writable", extra={"cache": str(cache_file)})


def _validate(model: type[BaseModel], data: Any, where: str) -> Any:
    from pydantic import ValidationError

    if not isinstance(data, dict):
        raise errors.InvalidInput(f"expected a {model.__name__} mapping", where=where)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".")
        raise errors.InvalidInput(first["msg"], where=located(where, loc)) from None


def _check_fields(doc: BaseModel, where: str) -> None:
    """An unknown key is an error in either format (upstream's loader drops it without a word)."""
    from shared.recipe import models

    unknown = next(models.unknown_fields(doc), None)
    if unknown is not None:
        raise errors.InvalidInput(f"unknown field {unknown!r}", where=located(where, unknown))


def located(where: str, field_path: str) -> str:
    """``file:line field`` when the line can be found (only called on the error path: it reads the file again)."""
    try:
        line = yamlio.line_of(yamlio.read_text(Path(where)), field_path)
    except errors.InvalidInput:
        line = None
    return f"{where}:{line} {field_path}" if line else f"{where} {field_path}"


def _check_api_version(data: dict[str, Any], where: str) -> str:
    api = data.get("apiVersion")
    if api not in API_VERSIONS:
        raise errors.InvalidInput(
            f"unsupported apiVersion {api!r}, expected one of {', '.join(API_VERSIONS)}",
            where=f"{where} apiVersion",
        )
    return str(api)


def load_directory(root: Path, *, label: str | None = None, external: bool = True) -> Catalog:
    """Read a catalog folder in our format or upstream AICR's."""
    entries = walk(root, external=external)
    return load_entries(root, entries, digest(entries), label=label)


def load_entries(root: Path, entries: list[tuple[str, Path]], content: str, *, label: str | None = None) -> Catalog:
    """The catalog of the folder ``root`` whose files ``walk`` found (``content`` their digest)."""
    parsed = _parse_documents(entries, content)
    catalog = Catalog(label=label or str(root))
    catalog.files = {rel: path for rel, path in entries}
    for rel, data in parsed.items():
        where = str(root / rel)
        if rel == REGISTRY_FILE:
            _load_registry(catalog, data, where)
        elif rel.startswith("components/"):
            catalog.parsed[rel] = data
        elif isinstance(data, dict):
            _load_document(catalog, rel, data, where)
    return catalog


def _load_registry(catalog: Catalog, data: Any, where: str) -> None:
    if not isinstance(data, dict):
        raise errors.InvalidInput("expected a ComponentRegistry mapping", where=where)
    from shared.recipe import models

    _check_api_version(data, where)
    registry = _validate(models.ComponentRegistry, data, where)
    _check_fields(registry, where)
    for index, component in enumerate(registry.components):
        if component.name in catalog.registry:
            raise errors.InvalidInput(f"duplicate component {component.name!r}", where=f"{where} components[{index}]")
        if component.helm is not None and component.kustomize is not None:
            raise errors.InvalidInput(
                "a component has either helm or kustomize defaults, not both",
                where=f"{where} components[{index}] ({component.name})",
            )
        catalog.registry[component.name] = component
        catalog.origin[f"component:{component.name}"] = where
    aliases: dict[str, str] = {}
    for component in registry.components:
        for alias in component.valueOverrideKeys:
            if alias in aliases:
                raise errors.InvalidInput(
                    f"override key {alias!r} is used by {aliases[alias]!r} and {component.name!r}", where=where
                )
            aliases[alias] = component.name


def _load_document(catalog: Catalog, rel: str, data: dict[str, Any], where: str) -> None:
    from shared.recipe import models

    kind = data.get("kind")
    if kind not in ("RecipeMetadata", "RecipeMixin"):
        if rel.startswith(("overlays/", "mixins/")) and data.get("apiVersion") == API_VERSION:
            raise errors.InvalidInput(f"unexpected kind {kind!r} in a catalog folder", where=f"{where} kind")
        return  # upstream keeps other documents (validator catalogs) beside overlays
    _check_api_version(data, where)
    if kind == "RecipeMixin":
        mixin = _validate(models.RecipeMixin, data, where)
        _check_fields(mixin, where)
        catalog.mixins[mixin.metadata.name] = mixin
        catalog.origin[f"mixin:{mixin.metadata.name}"] = where
        return
    overlay = _validate(models.RecipeMetadata, data, where)
    _check_fields(overlay, where)
    _check_duplicates(overlay, where)
    if PurePosixPath(rel).name == "base.yaml":
        catalog.base = overlay
        catalog.origin[f"overlay:{BASE_NAME}"] = where
        return
    name = overlay.metadata.name
    if name == BASE_NAME:
        raise errors.InvalidInput("only base.yaml may be named 'base'", where=f"{where} metadata.name")
    catalog.overlays[name] = overlay
    catalog.origin[f"overlay:{name}"] = where


def _check_duplicates(overlay: models.RecipeMetadata, where: str) -> None:
    seen: set[str] = set()
    for index, ref in enumerate(overlay.spec.componentRefs or []):
        if ref.name in seen:
            raise errors.InvalidInput(f"duplicate component {ref.name!r}", where=f"{where} spec.componentRefs[{index}]")
        seen.add(ref.name)


def embedded_root() -> Path:
    return Path(str(resources.files("shared.recipe") / "catalog"))


@functools.cache
def embedded() -> Catalog:
    """The catalog shipped in the package, loaded once per process (callers never mutate it)."""
    return load_directory(embedded_root(), label=EMBEDDED, external=False)


def select(*, catalog_dir: Path | None = None, data_dir: Path | None = None) -> Catalog:
    """The catalog a command works with: ``--catalog`` instead of, ``--data`` over, the embedded one."""
    base = load_directory(catalog_dir) if catalog_dir is not None else embedded()
    if data_dir is not None:
        return base.layered(load_directory(data_dir))
    return base
