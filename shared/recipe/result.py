"""Reading a resolved recipe back: the one parser every command that takes ``--recipe`` uses."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from shared import errors
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
        return models.RecipeResult.model_validate(data)
    except ValidationError as exc:
        raise errors.from_validation(exc, where=where) from None
