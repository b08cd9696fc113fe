"""The deployer-independent half of ``aicr bundle``: what gets deployed, in which order, with which values.

A ``BundlePlan`` is computed once from the recipe file, the catalog and the flags; each deployer
only lays it out. Values per component stack as the issue says: the component's default values
file → the overlay's values file → the recipe's overrides (``shared.recipe.values``) → the node
placement flags at the registry's declared paths → ``--set``. Components switched off (recipe
``overrides.enabled: false``, or ``--set NAME:enabled=false``; ``=true`` switches one back on) are
dropped as upstream drops them.

Manifests are rendered here with the component's final values (:mod:`shared.bundle.manifests`),
so every deployer lays out the same objects. For a component without a chart its manifests are
the only place its values go: a ``--set`` that no manifest reads is refused, and a placement
flag that no manifest reads keeps its registry warning.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from shared import cachedir, errors, grammars, yamlio
from shared import refs as documents
from shared.bundle import manifests as manifests_mod
from shared.bundle import overrides, scheduling, validations
from shared.bundle.request import BundleRequest
from shared.kube.api import ApiFactory
from shared.recipe import catalog as catalog_mod
from shared.recipe import models, result, values

logger = logging.getLogger(__name__)

DEFAULT_NAMESPACE = "default"


Manifest = manifests_mod.Manifest


@dataclass
class ComponentPlan:
    """One enabled component, ready to lay out."""

    name: str
    position: int
    folder: str
    namespace: str | None
    type: str
    chart: str
    source: str
    version: str
    tag: str
    path: str
    values: dict[str, Any]
    manifests: list[Manifest]
    dependencies: list[str]
    reads: manifests_mod.Rendered | None = None
    """What rendering the manifests read of ``values`` (None: the component has no manifest files)."""

    @property
    def has_chart(self) -> bool:
        return self.type == "Helm" and bool(self.source)

    @property
    def is_kustomize(self) -> bool:
        return self.type == "Kustomize"

    @property
    def is_oci(self) -> bool:
        return self.source.startswith("oci://")

    @property
    def oci_host_path(self) -> str:
        """The OCI repository without its scheme (``ghcr.io/nvidia``), as Argo CD and helmfile want it."""
        return self.source.removeprefix("oci://").rstrip("/")

    @property
    def chart_ref(self) -> str:
        """What ``helm upgrade --install`` takes: ``oci://repo/chart`` or the bare chart with ``--repo``."""
        return f"{self.source.rstrip('/')}/{self.chart}" if self.is_oci else self.chart

    @property
    def release_namespace(self) -> str:
        return self.namespace or DEFAULT_NAMESPACE


@dataclass
class BundlePlan:
    """Everything a deployer needs; the deployers never read files or flags themselves."""

    recipe: models.RecipeResult
    recipe_text: str
    components: list[ComponentPlan]
    disabled: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    repo: str | None = None

    def component(self, name: str) -> ComponentPlan:
        return next(c for c in self.components if c.name == name)

    def refuse_kustomize(self, deployer: str) -> None:
        """InvalidInput for the first Kustomize component, for a deployer that lays out charts and manifests only."""
        for c in self.components:
            if c.is_kustomize:
                raise errors.InvalidInput(
                    f"component {c.name!r} is a Kustomize component, which the {deployer} deployer "
                    "does not support (use helm or argocd)"
                )

    @property
    def criteria(self) -> dict[str, Any]:
        return dict(self.recipe.criteria)


def _parse_cached(text: str, where: str) -> Any:
    """Parse YAML through a content-keyed JSON cache: the pure-Python YAML parser costs more than
    the rest of planning, and a recipe is bundled again and again (one run per deployer, CI loops)."""
    cache = cachedir.user_cache(f"recipe-{hashlib.sha256(text.encode()).hexdigest()}.json")
    try:
        return json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    data = yamlio.loads(text, source=where)
    try:
        encoded = json.dumps(data)
    except (TypeError, ValueError):
        return data  # a value JSON cannot hold (a YAML timestamp): parse again next time
    try:
        from shared import files

        files.program_folder(cache.parent)
        files.atomic_write_text(cache, encoded)
    except (OSError, errors.ToolError):
        logger.debug("recipe cache not writable", extra={"cache": str(cache)})
    return data


def load_recipe(reference: str, *, api: ApiFactory) -> tuple[models.RecipeResult, str]:
    """Read a RecipeResult from a file or ``cm://NAMESPACE/NAME``: the model and the text as given."""
    text, where = documents.read_text(reference, api=api)
    recipe = result.parse(_parse_cached(text, where), where=where)
    if not recipe.componentRefs:
        raise errors.InvalidInput("the recipe has no components", where=f"{where} componentRefs")
    return recipe, text


def deployment_order(recipe: models.RecipeResult, *, where: str) -> list[str]:
    """The recipe's own order when it is a valid one (the common case, no graph library needed),
    otherwise computed as ``aicr recipe`` computes it."""
    deps = {ref.name: list(ref.dependencyRefs or []) for ref in recipe.componentRefs}
    if len(deps) != len(recipe.componentRefs):
        raise errors.InvalidInput("a component is listed twice", where=f"{where} componentRefs")
    order = list(recipe.deploymentOrder)
    if not order:
        from shared.recipe import graph

        return graph.deployment_order(deps, where=where)
    if sorted(order) != sorted(deps):
        raise errors.InvalidInput(
            "deploymentOrder must list every component exactly once", where=f"{where} deploymentOrder"
        )
    seen: set[str] = set()
    for name in order:
        for dep in deps[name]:
            if dep not in deps:
                raise errors.InvalidInput(
                    f"component {name!r} depends on {dep!r}, which is not in the recipe", where=f"{where} componentRefs"
                )
            if dep not in seen:
                raise errors.InvalidInput(
                    f"{name!r} comes before its dependency {dep!r}", where=f"{where} deploymentOrder"
                )
        seen.add(name)
    return order


def _flags(request: BundleRequest) -> scheduling.Scheduling:
    if request.nodes is not None and request.nodes < 0:
        raise errors.InvalidInput(f"invalid nodes count {request.nodes} (must be >= 0)", where="--nodes")
    gate = request.workload_gate
    return scheduling.Scheduling(
        system_selector=scheduling.parse_selector(request.system_node_selector, flag="--system-node-selector"),
        system_tolerations=[
            scheduling.parse_toleration(t, flag="--system-node-toleration") for t in request.system_node_toleration
        ],
        accelerated_selector=scheduling.parse_selector(
            request.accelerated_node_selector, flag="--accelerated-node-selector"
        ),
        accelerated_tolerations=[
            scheduling.parse_toleration(t, flag="--accelerated-node-toleration")
            for t in request.accelerated_node_toleration
        ],
        workload_selector=scheduling.parse_selector(request.workload_selector, flag="--workload-selector"),
        workload_gate=scheduling.parse_taint(gate, flag="--workload-gate") if gate is not None else None,
        nodes=request.nodes or 0,
    )


def _is_enabled(ref: models.ComponentRef, sets: list[overrides.SetOverride]) -> bool:
    switches = [s for s in sets if s.path == (overrides.ENABLED_KEY,)]
    if switches:
        return overrides.enabled_flag(switches[-1])
    return (ref.overrides or {}).get(overrides.ENABLED_KEY) is not False


def _check_name(value: str, what: str, where: str) -> None:
    """Release, Application and HelmRelease names and namespaces must be DNS-1123 labels; refusing
    anything else also keeps component names out of shell and template syntax altogether."""
    problem = grammars.dns_label(value)
    if problem is not None:
        raise errors.InvalidInput(f"{what} {problem}", where=where)


def check_references(ref: models.ComponentRef, index: int, text: str, where: str) -> None:
    """Chart, version, source, path and tag against their grammars, before any of them reaches a
    script or a manifest: what Helm, git or kustomize would refuse, or what holds shell syntax,
    stops here with the field's line in the recipe."""
    problems = grammars.component_problems(
        kustomize=ref.type == "Kustomize",
        chart=ref.chart,
        source=ref.source,
        version=ref.version,
        path=ref.path,
        tag=ref.tag,
    )
    for name, problem in problems[:1]:
        key = f"componentRefs[{index}].{name}"
        line = yamlio.line_of(text, key) if not where.startswith("cm://") else None
        raise errors.InvalidInput(problem, where=f"{where}:{line} {key}" if line else f"{where} {key}")


def _manifest_sources(ref: models.ComponentRef, cat: catalog_mod.Catalog, where: str) -> list[tuple[str, str]]:
    """``(catalog path, text)`` of each manifest file, in the recipe's order."""
    found: list[tuple[str, str]] = []
    names: set[str] = set()
    for rel in ref.manifestFiles or []:
        if not cat.has_file(rel):
            raise errors.InvalidInput(
                f"manifest file {rel!r} does not exist in {cat.label} (bundle with the "
                "--catalog/--data the recipe was resolved with)",
                where=where,
            )
        name = PurePosixPath(rel).name
        if name in names:
            raise errors.InvalidInput(f"two manifest files are named {name!r}", where=where)
        names.add(name)
        found.append((rel, yamlio.read_text(cat.files[str(PurePosixPath(rel))])))
    return found


def _render_manifests(c: ComponentPlan, sources: list[tuple[str, str]]) -> None:
    """Render ``c``'s manifests with its final values, in place."""
    if not sources:
        return
    rendered = manifests_mod.render(
        sources,
        component=c.name,
        chart=c.chart,
        version=c.version,
        namespace=c.release_namespace,
        values=c.values,
    )
    c.manifests, c.reads = rendered.manifests, rendered


def _values(
    ref: models.ComponentRef,
    cat: catalog_mod.Catalog,
    flags: scheduling.Scheduling,
    sets: list[overrides.SetOverride],
    where: str,
) -> dict[str, Any]:
    if ref.valuesFile and not cat.has_file(ref.valuesFile):
        raise errors.InvalidInput(
            f"values file {ref.valuesFile!r} does not exist in {cat.label} (bundle with the "
            "--catalog/--data the recipe was resolved with)",
            where=where,
        )
    merged = copy.deepcopy(values.component_values(ref, cat))
    scheduling.apply(merged, cat.registry.get(ref.name), flags, component=ref.name)
    for override in sets:
        if override.path != (overrides.ENABLED_KEY,):
            overrides.set_path(merged, override.path, override.value, where=f"--set {override.raw!r}")
    return merged


def build(request: BundleRequest) -> BundlePlan:
    """The plan for ``request``. Raises InvalidInput for anything that cannot be bundled as asked."""
    where = str(request.recipe)
    from shared.kube.client import LazyClient

    with LazyClient(kubeconfig=request.kubeconfig, context=request.context) as api:
        recipe, text = load_recipe(where, api=api)
    order = deployment_order(recipe, where=where)
    flags = _flags(request)
    cat = catalog_mod.select(catalog_dir=request.catalog_dir, data_dir=request.data_dir)
    parsed = [overrides.parse(raw) for raw in request.sets]
    aliases = {alias: name for name, entry in cat.registry.items() for alias in entry.valueOverrideKeys}
    grouped = overrides.resolve_targets(parsed, order, aliases)
    refs = {ref.name: ref for ref in recipe.componentRefs}
    for index, ref in enumerate(recipe.componentRefs):
        check_references(ref, index, text, where)
    enabled = [name for name in order if _is_enabled(refs[name], grouped[name])]
    disabled = [name for name in order if name not in enabled]
    if not enabled:
        raise errors.InvalidInput("the recipe has no enabled components after filtering", where=where)
    for name in disabled:
        logger.info("skipping disabled component", extra={"component": name})
    width = max(3, len(str(len(enabled))))
    components: list[ComponentPlan] = []
    notes: list[str] = []
    for position, name in enumerate(enabled, start=1):
        ref, here = refs[name], f"{where} component {name}"
        _check_name(name, "component name", here)
        if ref.namespace:
            _check_name(ref.namespace, "namespace", here)
        for dep in ref.dependencyRefs or []:
            if dep in disabled:
                notes.append(f"{name} depends on {dep}, which is disabled: it must already be installed")
        components.append(
            ComponentPlan(
                name=name,
                position=position,
                folder=f"{position:0{width}d}-{name}",
                namespace=ref.namespace or (DEFAULT_NAMESPACE if ref.type != "Kustomize" and ref.source else None),
                type=ref.type or "Helm",
                chart=ref.chart or name,
                source=ref.source or "",
                version=ref.version or "",
                tag=ref.tag or "",
                path=ref.path or "",
                values=_values(ref, cat, flags, grouped[name], here),
                manifests=[],
                dependencies=[d for d in ref.dependencyRefs or [] if d in enabled],
            )
        )
        _render_manifests(components[-1], _manifest_sources(ref, cat, here))
        validations.check_sets_reach(components[-1], grouped[name])
    notes = validations.notes(recipe, cat, flags, components) + notes
    bundled = recipe.model_copy(
        update={
            "componentRefs": [ref for ref in recipe.componentRefs if ref.name in enabled],
            "deploymentOrder": enabled,
        }
    )
    # The bundle keeps the recipe as given; only when components were dropped is it rewritten
    # without them, so the copy always says what the bundle deploys.
    copy_text = text if not disabled else yamlio.dumps(_recipe_document(bundled))
    return BundlePlan(
        recipe=bundled, recipe_text=copy_text, components=components, disabled=disabled, notes=notes, repo=request.repo
    )


def _recipe_document(recipe: models.RecipeResult) -> dict[str, Any]:
    from shared.recipe import resolver

    return resolver.recipe_document(recipe)
