"""JSON Schemas of every file format, generated from the pydantic models, for editors.

``python -m shared.schemas docs/schemas`` rewrites them; a test fails when the committed copies
drift from the models.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from shared import files


def _models() -> dict[str, type[Any]]:
    """File name → model (a pydantic model, or a dataclass pydantic reads, such as Criteria)."""
    from shared.certify import models as certify_models
    from shared.certify.parsers import nccl_log
    from shared.lifecycle import models as lifecycle_models
    from shared.recipe import criteria, health, models, snapshot

    return {
        "recipe.schema.json": models.RecipeResult,
        "overlay.schema.json": models.RecipeMetadata,
        "mixin.schema.json": models.RecipeMixin,
        "registry.schema.json": models.ComponentRegistry,
        "criteria.schema.json": criteria.Criteria,
        "snapshot.schema.json": snapshot.Snapshot,
        "health-check-asserts.schema.json": health.HealthCheckAsserts,
        "certification.schema.json": certify_models.Certification,
        "nccl-result.schema.json": nccl_log.NcclResult,
        "validationrequest.schema.json": lifecycle_models.ValidationRequest,
    }


def render() -> dict[str, str]:
    """File name → schema text."""
    out: dict[str, str] = {}
    for name, model in _models().items():
        schema: dict[str, Any] = (
            model.model_json_schema() if issubclass(model, BaseModel) else TypeAdapter(model).json_schema()
        )
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        out[name] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return out


def main(argv: list[str]) -> int:
    target = Path(argv[0] if argv else "docs/schemas")
    files.program_folder(target)
    for name, text in render().items():
        files.atomic_write_text(target / name, text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
