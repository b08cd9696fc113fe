"""The values a deployer hands Helm for each component of a recipe, read from the product's catalog.

``seed`` installs a recipe as Helm would, and Helm is given each component's merged values (the
catalog's default values file, the overlay's, the recipe's overrides): that is where a recipe pins
the GPU driver (``gpu-operator`` ``driver.version``), and what a release Secret records as its
``config``. The seed command reads them here, client side, and sends them with the recipe; the
simulator's server never reads the catalog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared.recipe import catalog, models, values


def merged(
    recipe: dict[str, Any], *, data_dir: Path | None = None, catalog_dir: Path | None = None
) -> dict[str, dict[str, Any]]:
    """Component name → its merged values; ValueError when ``recipe`` is no RecipeResult."""
    try:
        result = models.RecipeResult.model_validate(recipe)
    except Exception as exc:
        raise ValueError(f"not a resolved recipe (RecipeResult): {exc}") from None
    cat = catalog.select(catalog_dir=catalog_dir, data_dir=data_dir)
    return {ref.name: values.component_values(ref, cat) for ref in result.componentRefs}


def pinned_driver(component_values: dict[str, dict[str, Any]]) -> str | None:
    """The driver version the GPU Operator would install, or None when it installs none
    (``driver.enabled: false``: the host or the provider owns the driver)."""
    driver = (component_values.get("gpu-operator") or {}).get("driver") or {}
    if not isinstance(driver, dict) or driver.get("enabled", True) is False:
        return None
    version = driver.get("version")
    return str(version) if version else None
