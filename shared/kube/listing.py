"""A listed collection parsed object by object: one malformed object is skipped and named.

An object stored under an older, looser CRD (or written by another tool) may not fit today's
model. kubectl still lists the rest; so do our listings: each object that does not parse becomes
a ``Skipped`` entry naming it and its first problem, and the command warns and carries on
(``--strict`` turns a skip into exit 1). A single-object read stays strict: there the object is
the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

Model = TypeVar("Model", bound=BaseModel)


@dataclass(frozen=True)
class Skipped:
    """An object left out of a listing: who it is (``certification nvcre/bad``) and why."""

    what: str
    reason: str


@dataclass(frozen=True)
class Listing(Generic[Model]):
    """The objects that parsed, in the server's order, and the ones that did not."""

    items: list[Model] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def first_problem(exc: ValidationError, *, under: str = "") -> str:
    """The first field error as ``path: message`` (``under`` prefixes the path: ``spec``)."""
    problems = exc.errors()
    if not problems:
        return str(exc)
    first = problems[0]
    where = ".".join([*([under] if under else []), *(str(part) for part in first.get("loc", ()))])
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}: {first.get('msg', 'invalid')}{more}" if where else f"{first.get('msg', 'invalid')}{more}"


def parse(
    raw: Iterable[dict[str, Any]], model: type[Model], *, what: Callable[[str, str | None], str]
) -> Listing[Model]:
    """Each item of ``raw`` validated as ``model``; ``what(name, namespace)`` names a skipped one."""
    listing: Listing[Model] = Listing()
    for item in raw:
        try:
            listing.items.append(model.model_validate(item))
        except ValidationError as exc:
            metadata = item.get("metadata") or {}
            name = str(metadata.get("name") or "?")
            listing.skipped.append(Skipped(what(name, metadata.get("namespace")), first_problem(exc)))
    return listing
