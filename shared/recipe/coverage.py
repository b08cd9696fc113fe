"""Which of a query's criteria chose an overlay, and what the others would need.

A criterion no applied overlay names has no effect on the recipe: ``--service gke --accelerator
h100 --intent training`` gives the base recipe (GKE overlays also need ``os: cos``), and a user who
reads only the exit status believes a GKE training recipe was built. The resolver warns with what
this module finds: the criteria that matched nothing and, for each, the least specific overlay that
names it and would match had the query also set the criteria it left open (none when every such
overlay contradicts a value the query set).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from shared.recipe import criteria as criteria_mod
from shared.recipe.vocabulary import ANY, FIELDS

Named = tuple[str, criteria_mod.Criteria]


def _pairs(crit: criteria_mod.Criteria) -> dict[str, str]:
    pairs = {name: str(getattr(crit, name)) for name in FIELDS if getattr(crit, name) != ANY}
    if crit.nodes:
        pairs["nodes"] = str(crit.nodes)
    return pairs


def unmatched(query: criteria_mod.Criteria, applied: Iterable[criteria_mod.Criteria]) -> list[str]:
    """``field=value`` for each criterion of ``query`` that no applied overlay's selector names."""
    named = [_pairs(crit) for crit in applied]
    return [f"{k}={v}" for k, v in _pairs(query).items() if not any(sel.get(k) == v for sel in named)]


def hints(query: criteria_mod.Criteria, missed: Sequence[str], candidates: Iterable[Named]) -> dict[str, list[str]]:
    """Criteria to add (``"os=cos"``) → overlays that would then match, for the ``missed`` criteria.

    Per missed criterion, the least specific overlay (then by name) that names it and contradicts
    nothing the query set; overlays needing the same additions are grouped.
    """
    asked = _pairs(query)
    ranked = sorted(candidates, key=lambda c: (c[1].specificity(), c[0]))
    grouped: dict[str, list[str]] = {}
    for criterion in missed:
        key, value = criterion.split("=", 1)
        for name, crit in ranked:
            wanted = _pairs(crit)
            if wanted.get(key) != value or any(k in asked and asked[k] != v for k, v in wanted.items()):
                continue
            extra = ", ".join(f"{k}={v}" for k, v in wanted.items() if k not in asked)
            if extra and name not in grouped.setdefault(extra, []):
                grouped[extra].append(name)
            break
    return {extra: sorted(names) for extra, names in grouped.items()}


def naming(missed: Sequence[str], overlays: Iterable[Named]) -> list[str]:
    """The names of ``overlays`` whose selector names one of the ``missed`` criteria, sorted."""
    wanted = {tuple(criterion.split("=", 1)) for criterion in missed}
    return sorted(name for name, crit in overlays if wanted & set(_pairs(crit).items()))


def message(
    missed: Sequence[str], applied: Sequence[str], tips: dict[str, list[str]], excluded: Sequence[str] = ()
) -> str:
    """The warning line (without the ``warning:`` prefix); ``excluded``: overlays naming a missed
    criterion that matched but were dropped for the snapshot's constraints (warned about above)."""
    text = f"criteria matched no overlay: {', '.join(missed)} (the recipe uses {', '.join(applied)} only)"
    if excluded:
        text += f"; the snapshot's constraints excluded {', '.join(excluded)}"
    for extra, overlays in tips.items():
        text += f"; with {extra} it would also match {', '.join(overlays)}"
    return text
