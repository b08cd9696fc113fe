"""The calls behind ``aicr snapshot`` and ``aicr diff``, and the loading ``aicr validate`` shares.

Each command names its inputs as files or ``cm://`` references and, when it needs the live cluster,
a kubeconfig and context; the API client is built only when something actually needs it.
``aicr validate`` has its own entry point, ``shared.validate.service``, which builds on this one;
this package never imports validation.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from shared import refs
from shared.kube.api import KubeApi
from shared.recipe import models, result
from shared.recipe import snapshot as snapshot_model
from shared.recipe.snapshot import Snapshot

if TYPE_CHECKING:
    from shared.snapshot.diff import DriftReport


class ClusterAccess:
    """The cluster a command may talk to; built on first use, closed when the ``with`` block ends."""

    def __init__(self, *, kubeconfig: Path | None = None, context: str | None = None) -> None:
        from shared.kube.client import LazyClient

        self._lazy = LazyClient(kubeconfig=kubeconfig, context=context)

    @property
    def api(self) -> KubeApi:
        return self._lazy()

    def factory(self) -> KubeApi:
        return self._lazy()

    def __enter__(self) -> ClusterAccess:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._lazy.close()


def take(access: ClusterAccess) -> Snapshot:
    from shared.snapshot import collect

    return collect.collect(access.api)


def write_snapshot(snapshot: Snapshot, *, destination: str | None, fmt: Any, access: ClusterAccess) -> None:
    """To stdout, a file (atomically) or a ConfigMap (always YAML there, as upstream reads it)."""
    from shared import output

    data = snapshot.model_dump(exclude_none=True)
    if destination is None or destination == "-":
        output.write_data(output.to_json(data) if fmt is output.Format.JSON else output.to_yaml(data))
        return
    as_json = fmt is output.Format.JSON and not destination.startswith(refs.CM_SCHEME)
    refs.write_text(
        destination, output.to_json(data) if as_json else output.to_yaml(data), api=access.factory, component="snapshot"
    )


def load_snapshot(reference: str, access: ClusterAccess) -> Snapshot:
    data, where = refs.read_document(reference, api=access.factory, kind="snapshot")
    return snapshot_model.parse(data, where=where)


def load_recipe(reference: str, access: ClusterAccess) -> models.RecipeResult:
    data, where = refs.read_document(reference, api=access.factory)
    return result.parse(data, where=where)


def pinned_driver(recipe: models.RecipeResult, *, data_dir: Path | None) -> str | None:
    """The GPU driver the recipe's GPU Operator installs, from its merged values (the embedded
    catalog, with ``--data`` over it when the recipe was resolved with one)."""
    from shared.recipe import catalog
    from shared.snapshot import pins

    return pins.pinned_driver(recipe, catalog.select(data_dir=data_dir))


def snapshot_or_live(reference: str | None, access: ClusterAccess) -> tuple[Snapshot, str]:
    if reference is None:
        return take(access), "live cluster"
    return load_snapshot(reference, access), reference


def drift(
    *, baseline: str, target: str | None, ignore: list[str], access: ClusterAccess, data_dir: Path | None = None
) -> DriftReport:
    """A DriftReport of ``target`` (default: the live cluster) against ``baseline`` (snapshot or recipe)."""
    from shared.snapshot import diff

    data, where = refs.read_document(baseline, api=access.factory)
    recipe = result.parse(data, where=where) if isinstance(data, dict) and data.get("kind") == "RecipeResult" else None
    driver = pinned_driver(recipe, data_dir=data_dir) if recipe is not None else None
    target_snapshot, target_name = snapshot_or_live(target, access)
    if recipe is not None:
        changes = diff.compare_recipe(recipe, target_snapshot, driver=driver)
    else:
        changes = diff.compare(snapshot_model.parse(data, where=where), target_snapshot)
    return diff.report(changes, ignore=ignore, baseline=baseline, target=target_name)
