"""The one call behind ``aicr recipe`` (memo first, full resolution on a miss) and ``aicr query``.

Kept apart from ``request`` so that a memo hit imports nothing but the standard library.
"""

from __future__ import annotations

from pathlib import Path

from shared import errors, refs
from shared.output import Format
from shared.recipe import memo

EMBEDDED_CATALOG = memo.EMBEDDED_CATALOG


def recipe_text(
    *, fmt: Format, explain: bool = False, explain_fmt: Format | None = None, **fields: object
) -> tuple[str, str | None]:
    """(recipe text, explanation text or None) for the request ``fields`` (see RecipeRequest).

    The explanation is in ``explain_fmt`` (default: ``fmt``)."""
    fields = {k: v for k, v in fields.items() if v is not None}
    memo_key = None if explain or _remote_inputs(fields) else memo.request_key(fields, fmt.value)
    cached = memo.lookup(memo_key)
    if cached is not None:
        return cached, None
    from shared.recipe import report, request

    with memo.counting_warnings() as warnings:
        resolution, _ = request.build(request.RecipeRequest.of(fields))
        text = report.recipe_text(resolution, fmt)
    if warnings.count == 0:
        memo.store(memo_key, text)
    return text, report.explain_text(resolution, explain_fmt or fmt) if explain else None


def _remote_inputs(fields: dict[str, object]) -> bool:
    """A criteria or snapshot input in a ConfigMap or at a URL: it cannot be hashed unread, so the
    request is not memoised."""
    inputs = [p for p in (fields.get("criteria_file"), fields.get("snapshot_file")) if p]
    return any(refs.is_remote(str(p)) for p in inputs)


def check_destination(destination: str, fmt: Format) -> None:
    """Refuse, before resolving, an ``-o`` the recipe could not be written to (exit 2)."""
    refs.check_writable(destination)
    if refs.is_remote(destination) and fmt is Format.TABLE:
        raise errors.InvalidInput(
            "a ConfigMap holds the recipe as YAML or JSON, not a table: drop --format table", where=destination
        )


def write(
    text: str, *, destination: str, fmt: Format, kubeconfig: Path | None = None, context: str | None = None
) -> None:
    """The recipe to a file (atomically) or to ``cm://NS/NAME`` (key ``recipe.yaml`` or ``recipe.json``)."""
    from shared.kube.client import LazyClient

    check_destination(destination, fmt)
    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        refs.write_text(destination, text, api=api, component="recipe", fmt="json" if fmt is Format.JSON else "yaml")


def query_text(*, selector: str, fmt: Format, **fields: object) -> str:
    """``aicr query``: the value at ``selector`` of the recipe ``fields`` ask for (see RecipeRequest),
    Helm values merged in. Memoised as a recipe is, under a key that also holds the selector: a
    value read in a CI loop costs a hash and a read."""
    fields = {k: v for k, v in fields.items() if v is not None}
    memo_key = None if _remote_inputs(fields) else memo.query_key(fields, selector, fmt.value)
    cached = memo.lookup(memo_key)
    if cached is not None:
        return cached
    from shared.recipe import report, request, values

    with memo.counting_warnings() as warnings:
        resolution, cat = request.build(request.RecipeRequest.of(fields))
        text = report.query_text(values.select(values.hydrate(resolution.document(), cat), selector), fmt)
    if warnings.count == 0:
        memo.store(memo_key, text)
    return text
