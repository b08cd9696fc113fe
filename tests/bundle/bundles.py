"""Helpers shared by the bundle tests: recipes written to disk, bundles rendered, files parsed."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from shared import yamlio
from shared.bundle import deployers, service
from shared.bundle.request import BundleRequest
from shared.bundle.result import BundleResult
from shared.recipe import catalog, resolver
from shared.recipe.criteria import Criteria

DEPLOYERS = [d.value for d in deployers.Deployer]
SEED = {"service": "eks", "accelerator": "h100", "os": "ubuntu", "intent": "inference", "platform": "dynamo"}


def write_recipe(path: Path, *, cat: catalog.Catalog | None = None, **criteria: Any) -> Path:
    """Resolve a recipe (embedded catalog unless ``cat``) and write it where ``aicr recipe -o`` would."""
    resolution = resolver.resolve(Criteria(**criteria), cat or catalog.embedded())
    path.write_text(yamlio.dumps(resolution.document()), encoding="utf-8")
    return path


def write_document(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(yamlio.dumps(document), encoding="utf-8")
    return path


def make_bundle(recipe: Path, out: Path, deployer: str = "helm", **fields: Any) -> BundleResult:
    return service.bundle(BundleRequest(recipe=recipe, output=out, deployer=deployer, **fields))


def yaml_documents(root: Path) -> dict[str, list[Any]]:
    """Every YAML file of a bundle (Helm templates excluded) parsed into its documents."""
    found: dict[str, list[Any]] = {}
    for path in sorted(root.rglob("*.yaml")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("templates/"):
            continue
        found[rel] = yamlio.loads_all(path.read_text(encoding="utf-8"), source=rel)
    return found


def load(root: Path, rel: str) -> Any:
    return yamlio.load_file(root / rel)


def tree(root: Path) -> dict[str, bytes]:
    """Relative path → bytes of every file, for byte-identity checks."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def distinct_recipes(cat: catalog.Catalog) -> dict[tuple[str, ...], Criteria]:
    """One criteria set per distinct recipe of ``cat``: every combination of the five axes (the
    all-wildcard one aside), deduplicated by the overlays the recipe applies."""
    found: dict[tuple[str, ...], Criteria] = {}
    axes = (
        ["eks", "gke", "aks", "kind", "oke", "any"],
        ["h100", "gb200", "a100", "any"],
        ["ubuntu", "cos", "any"],
        ["training", "inference", "any"],
        ["dynamo", "kubeflow", "any"],
    )
    for combo in itertools.product(*axes):
        crit = Criteria(**dict(zip(("service", "accelerator", "os", "intent", "platform"), combo, strict=True)))
        if not crit.specificity():
            continue
        applied = tuple(resolver.resolve(crit, cat).recipe.metadata.appliedOverlays)
        found.setdefault(applied, crit)
    return found
