"""Reading a resolved recipe back: the one parser every command that takes ``--recipe`` uses.

A key the models do not declare is refused, as in a criteria file: a misspelt ``overides`` would
otherwise be dropped without a word and the bundle built without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from shared import errors, files, yamlio
from shared.recipe import models

KIND = "RecipeResult"


def parse(data: Any, *, where: str) -> models.RecipeResult:
    """A RecipeResult (ours or upstream's apiVersion) from parsed YAML/JSON; errors name the field."""
    if not isinstance(data, dict):
        raise errors.InvalidInput("expected a RecipeResult mapping", where=where)
    if data.get("kind") != KIND:
        raise errors.InvalidInput(
            f"expected kind {KIND} (from aicr recipe), got {data.get('kind')!r}", where=f"{where} kind"
        )
    if data.get("apiVersion") not in models.API_VERSIONS:
        raise errors.InvalidInput(
            f"unsupported apiVersion {data.get('apiVersion')!r}, expected one of {', '.join(models.API_VERSIONS)}",
            where=f"{where} apiVersion",
        )
    try:
        recipe = models.RecipeResult.model_validate(data)
    except ValidationError as exc:
        raise errors.from_validation(exc, where=where) from None
    unknown = next(models.unknown_fields(recipe), None)
    if unknown is not None:
        raise errors.InvalidInput(f"unknown field {unknown!r}", where=_located(where, unknown))
    return recipe


def _located(where: str, field_path: str) -> str:
    """``file:line field`` when ``where`` is a file whose text shows the field's line."""
    line = None
    if not where.startswith("cm://") and where != files.STDIN:
        try:
            line = yamlio.line_of(yamlio.read_text(Path(where)), field_path)
        except (errors.InvalidInput, OSError):
            line = None
    return f"{where}:{line} {field_path}" if line else f"{where} {field_path}"
