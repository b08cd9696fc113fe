"""The compiled catalog: a checked catalog's documents as plain data, which resolution reads.

Checking a catalog means building pydantic models, and importing pydantic and building the models
costs more than all the rest of ``aicr recipe`` (docs/benchmarks.md). So a catalog folder is
checked once (``catalog.load_entries`` builds and checks every model), and the documents, dumped
back to plain data, are kept in the user cache under the folder's content hash and the program's
own (``memo.program_digest``): an edited file or a new release checks the folder again. A recipe
resolved from an unchanged catalog imports neither pydantic nor the models.

The plain form of a model is its ``model_dump(exclude_none=True)`` (what the recipe writes for it),
with health asserts in their JSON form; a document dumped from a checked model holds no key the
models do not declare, since the catalog reader refuses those.
"""

from __future__ import annotations

import functools
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shared import cachedir, errors, files
from shared.recipe import catalog as catalog_mod
from shared.recipe import memo

if TYPE_CHECKING:
    from shared.recipe import models

logger = logging.getLogger(__name__)

Document = dict[str, Any]
CACHE_FOLDER = "compiled"
MAX_ENTRIES = 32
"""Compiled catalogs kept (one per catalog content and program version); the oldest go first."""


@dataclass
class CompiledCatalog(catalog_mod.Files):
    """A catalog's registry entries, base, overlays and mixins as plain documents, by name."""

    registry: dict[str, Document] = field(default_factory=dict)
    base: Document | None = None
    overlays: dict[str, Document] = field(default_factory=dict)
    mixins: dict[str, Document] = field(default_factory=dict)

    def layered(self, top: CompiledCatalog) -> CompiledCatalog:
        """This catalog with ``top`` over it, as ``Catalog.layered`` layers the checked one."""
        return CompiledCatalog(
            registry={**self.registry, **top.registry},
            base=top.base or self.base,
            overlays={**self.overlays, **top.overlays},
            mixins={**self.mixins, **top.mixins},
            **self._layered_files(top),
        )


def component(ref: models.ComponentRef | models.RegistryComponent) -> Document:
    """A component reference (or registry entry) as plain data."""
    data = ref.model_dump(exclude_none=True)
    if ref.healthCheckAsserts is not None:
        data["healthCheckAsserts"] = ref.healthCheckAsserts.model_dump(exclude_none=True, mode="json")
    return data


def _document(doc: models.RecipeMetadata | models.RecipeMixin) -> Document:
    data = doc.model_dump(exclude_none=True)
    if doc.spec.componentRefs is not None:
        data["spec"]["componentRefs"] = [component(ref) for ref in doc.spec.componentRefs]
    return data


def of(cat: catalog_mod.Catalog) -> CompiledCatalog:
    """The plain form of a checked catalog (as it is now: a caller may have changed its models)."""
    return CompiledCatalog(
        registry={name: component(entry) for name, entry in cat.registry.items()},
        base=_document(cat.base) if cat.base is not None else None,
        overlays={name: _document(doc) for name, doc in cat.overlays.items()},
        mixins={name: _document(doc) for name, doc in cat.mixins.items()},
        files=dict(cat.files),
        parsed=dict(cat.parsed),
        origin=dict(cat.origin),
        label=cat.label,
    )


def directory(root: Path, *, label: str | None = None, external: bool = True) -> CompiledCatalog:
    """The compiled catalog of a folder: from the cache, or checked (``catalog.load_entries``)
    and then cached. A folder that does not check raises as ``catalog.load_directory`` does,
    every time: only a catalog that checked is kept."""
    entries = catalog_mod.walk(root, external=external)
    content = catalog_mod.digest(entries)
    label = label or str(root)
    cache_file = _cache_file(content)
    cached = _read(cache_file) if cache_file is not None else None
    if cached is not None:
        try:
            return _from_cache(cached, root, entries, label)
        except (KeyError, TypeError, ValueError, AttributeError):
            logger.debug("compiled catalog unreadable, checking the catalog again", extra={"cache": str(cache_file)})
    compiled = of(catalog_mod.load_entries(root, entries, content, label=label))
    if cache_file is not None:
        _store(cache_file, compiled, root)
    return compiled


def _cache_file(content: str) -> Path | None:
    try:
        program = memo.program_digest()
    except OSError:
        return None  # the program's source cannot be hashed: check the catalog each time
    return cachedir.user_cache(CACHE_FOLDER, f"{content[:32]}-{program[:32]}.json")


def _read(cache_file: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _from_cache(data: dict[str, Any], root: Path, entries: list[tuple[str, Path]], label: str) -> CompiledCatalog:
    """The cached documents, with the places they came from below this ``root`` (the cache is
    keyed by content: the same catalog may be read from another folder)."""
    return CompiledCatalog(
        registry=dict(data["registry"]),
        base=data["base"],
        overlays=dict(data["overlays"]),
        mixins=dict(data["mixins"]),
        files=dict(entries),
        parsed=dict(data["parsed"]),
        origin={key: str(root / rel) for key, rel in data["origin"].items()},
        label=label,
    )


def _store(cache_file: Path, compiled: CompiledCatalog, root: Path) -> None:
    prefix = f"{root}/"
    if not all(where.startswith(prefix) for where in compiled.origin.values()):
        return
    data = {
        "registry": compiled.registry,
        "base": compiled.base,
        "overlays": compiled.overlays,
        "mixins": compiled.mixins,
        "parsed": compiled.parsed,
        "origin": {key: where[len(prefix) :] for key, where in compiled.origin.items()},
    }
    try:
        text = json.dumps(data)
        if json.loads(text) != data:
            return  # a value JSON does not give back as it was (a YAML timestamp, a number key)
    except (TypeError, ValueError):
        return  # a value JSON cannot hold: check the catalog each time instead
    folder = cache_file.parent
    try:
        files.program_folder(folder)
        files.atomic_write_text(cache_file, text)
        kept = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for stale in kept[: max(0, len(kept) - MAX_ENTRIES)]:
            stale.unlink(missing_ok=True)
    except (OSError, errors.ToolError):
        logger.debug("compiled catalog not writable", extra={"cache": str(cache_file)})


@functools.cache
def embedded() -> CompiledCatalog:
    """The shipped catalog, compiled, once per process (callers never change it)."""
    return directory(catalog_mod.embedded_root(), label=catalog_mod.EMBEDDED, external=False)


def select(*, catalog_dir: Path | None = None, data_dir: Path | None = None) -> CompiledCatalog:
    """The compiled catalog a command resolves with, as ``catalog.select`` chooses the checked one."""
    base = directory(catalog_dir) if catalog_dir is not None else embedded()
    if data_dir is not None:
        return base.layered(directory(data_dir))
    return base
