"""The one call behind ``aicr recipe`` (memo first, full resolution on a miss) and ``aicr query``.

Kept apart from ``request`` so that a memo hit imports nothing but the standard library.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from shared.output import Format
from shared.recipe import memo

if TYPE_CHECKING:
    from shared.recipe.request import RecipeRequest

EMBEDDED_CATALOG = Path(__file__).resolve().parent / "catalog"


def recipe_text(*, fmt: Format, explain: bool = False, **fields: object) -> tuple[str, str | None]:
    """(recipe text, explanation text or None) for the request ``fields`` (see RecipeRequest)."""
    catalogs = [p for p in (fields.get("catalog_dir") or EMBEDDED_CATALOG, fields.get("data_dir")) if p]
    fields = {k: v for k, v in fields.items() if v is not None}
    inputs = [p for p in (fields.get("criteria_file"), fields.get("snapshot_file")) if p]
    memo_key = None
    live = str(fields.get("snapshot_file") or "").startswith("cm://")  # a ConfigMap cannot be hashed unread
    if not explain and not live:
        memo_key = memo.key(
            request={k: str(v) for k, v in fields.items()},
            fmt=fmt.value,
            catalogs=[Path(str(p)) for p in catalogs],
            inputs=[Path(str(p)) for p in inputs],
        )
        cached = memo.lookup(memo_key)
        if cached is not None:
            return cached, None
    from shared.recipe import report, request

    with memo.counting_warnings() as warnings:
        resolution, _ = request.build(request.RecipeRequest.model_validate(fields))
        text = report.recipe_text(resolution, fmt)
    if warnings.count == 0:
        memo.store(memo_key, text)
    return text, report.explain_text(resolution, fmt) if explain else None


def query_text(recipe_request: RecipeRequest, *, selector: str, fmt: Format) -> str:
    """``aicr query``: the value at ``selector`` of the recipe asked for, Helm values merged in."""
    from shared.recipe import report, request, values

    resolution, cat = request.build(recipe_request)
    return report.query_text(values.select(values.hydrate(resolution.recipe, cat), selector), fmt)
