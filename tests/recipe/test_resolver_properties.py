"""Property tests of resolution over generated catalogs.

Covers: the result does not depend on the order overlays were read in; the applied overlays are
exactly the matching ones plus their ancestors, each after its parent; a pinned field comes from
the last applied overlay that sets it, else from the registry.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.recipe import catalog, models, resolver
from shared.recipe.criteria import Criteria

SERVICES = ["eks", "gke", "aks"]
INTENTS = ["training", "inference"]
COMPONENTS = ["alpha", "beta", "gamma"]


def _overlay(name: str, base: str | None, crit: dict[str, str], versions: dict[str, str]) -> models.RecipeMetadata:
    spec: dict[str, Any] = {"criteria": crit, "componentRefs": [{"name": c, "version": v} for c, v in versions.items()]}
    if base:
        spec["base"] = base
    return models.RecipeMetadata.model_validate(
        {"apiVersion": models.API_VERSION, "metadata": {"name": name}, "spec": spec}
    )


_versions = st.dictionaries(
    st.sampled_from(COMPONENTS), st.from_regex(r"[1-9]\.[0-9]\.[0-9]", fullmatch=True), max_size=3
)


@st.composite
def catalogs(draw: st.DrawFn) -> catalog.Catalog:
    cat = catalog.Catalog(label="generated")
    for name in COMPONENTS:
        cat.registry[name] = models.RegistryComponent.model_validate(
            {
                "name": name,
                "displayName": name,
                "helm": {
                    "defaultRepository": "https://charts.example.com",
                    "defaultChart": name,
                    "defaultVersion": "0.0.1",
                    "defaultNamespace": name,
                },
            }
        )
    cat.base = _overlay("base", None, {}, {c: "0.1.0" for c in COMPONENTS})
    cat.base.spec.criteria = None
    for service in draw(st.lists(st.sampled_from(SERVICES), unique=True, max_size=3)):
        cat.overlays[service] = _overlay(service, None, {"service": service}, draw(_versions))
        for intent in draw(st.lists(st.sampled_from(INTENTS), unique=True, max_size=2)):
            name = f"{service}-{intent}"
            cat.overlays[name] = _overlay(name, service, {"service": service, "intent": intent}, draw(_versions))
    if draw(st.booleans()):
        cat.overlays["everywhere"] = _overlay("everywhere", None, {"intent": "any"}, draw(_versions))
    return cat


_queries = st.builds(
    lambda s, i: Criteria(service=s, intent=i), st.sampled_from(SERVICES), st.sampled_from([*INTENTS, "any"])
)


@settings(max_examples=150, deadline=None)
@given(cat=catalogs(), query=_queries, seed=st.integers(0, 10_000))
def test_the_result_does_not_depend_on_reading_order(cat: catalog.Catalog, query: Criteria, seed: int) -> None:
    first = resolver.resolve(query, cat).document()
    names = list(cat.overlays)
    random.Random(seed).shuffle(names)
    shuffled = catalog.Catalog(
        registry=cat.registry, base=cat.base, overlays={n: cat.overlays[n] for n in names}, label="shuffled"
    )
    assert resolver.resolve(query, shuffled).document() == first


@settings(max_examples=150, deadline=None)
@given(cat=catalogs(), query=_queries)
def test_the_last_applied_overlay_setting_a_version_wins(cat: catalog.Catalog, query: Criteria) -> None:
    resolution = resolver.resolve(query, cat)
    applied = resolution.recipe.metadata.appliedOverlays
    matching = {n for n, o in cat.overlays.items() if Criteria.parse(o.spec.criteria or {}).matches(query)}
    assert set(applied) == {"base"} | matching
    for name in applied[1:]:
        parent = cat.overlays[name].spec.base
        if parent:
            assert applied.index(parent) < applied.index(name)
    for component in COMPONENTS:
        expected, setter = "0.1.0", "base"
        for name in applied[1:]:
            for ref in cat.overlays[name].spec.componentRefs or []:
                if ref.name == component and ref.version:
                    expected, setter = ref.version, name
        ref_out = resolution.recipe.component(component)
        assert ref_out is not None and ref_out.version == expected
        assert resolution.component_origin[component]["version"] == setter
