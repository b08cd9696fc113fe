"""The JSON Schemas in docs/schemas/ match the models, and real documents validate against them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from shared import schemas, yamlio
from shared.recipe import catalog

DOCS = Path(__file__).resolve().parent.parent / "docs" / "schemas"


def test_committed_schemas_match_the_models() -> None:
    for name, text in schemas.render().items():
        assert (DOCS / name).read_text(encoding="utf-8") == text, f"run `make schemas`: {name} is stale"


def test_every_embedded_catalog_file_validates_against_its_schema() -> None:
    overlay = json.loads((DOCS / "overlay.schema.json").read_text())
    registry = json.loads((DOCS / "registry.schema.json").read_text())
    root = catalog.embedded_root()
    jsonschema.validate(yamlio.load_file(root / "registry.yaml"), registry)
    files = sorted((root / "overlays").glob("*.yaml"))
    assert files
    for path in files:
        jsonschema.validate(yamlio.load_file(path), overlay)
