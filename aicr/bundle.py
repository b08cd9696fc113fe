"""``aicr bundle``: render a recipe for a deployer (helm, argocd, argocd-helm, flux, helmfile)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from aicr import _options as opt
from aicr import _registry_options as registry_opt

if TYPE_CHECKING:
    from shared.bundle import publish
    from shared.bundle.result import BundleResult

_DEPLOYERS = "helm, argocd, argocd-helm, flux, helmfile"


def bundle(
    recipe: Annotated[
        str,
        typer.Option(
            "--recipe", "-r", help="RecipeResult file (ours or upstream's) or cm://NAMESPACE/NAME.", show_default=False
        ),
    ],
    output: Annotated[
        str,
        typer.Option(
            "--output",
            "-o",
            help="Bundle directory (written atomically), or oci://REGISTRY/REPOSITORY[:TAG] to push the bundle "
            "as an OCI artifact (the tag defaults to the program's version).",
            show_default=False,
        ),
    ],
    deployer: Annotated[str, typer.Option("--deployer", "-d", help=f"One of: {_DEPLOYERS}.")] = "helm",
    sets: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="COMPONENT:path.to.key=value (repeatable); COMPONENT:enabled=false drops a component.",
            show_default=False,
        ),
    ] = None,
    repo: Annotated[
        str | None,
        typer.Option(
            "--repo", help="Git repository URL the bundle is pushed to (argocd, argocd-helm).", show_default=False
        ),
    ] = None,
    system_node_selector: Annotated[
        list[str] | None,
        typer.Option(
            "--system-node-selector", help="key=value for system components (repeatable).", show_default=False
        ),
    ] = None,
    system_node_toleration: Annotated[
        list[str] | None,
        typer.Option(
            "--system-node-toleration", help="key=value:Effect or key:Effect (repeatable).", show_default=False
        ),
    ] = None,
    accelerated_node_selector: Annotated[
        list[str] | None,
        typer.Option(
            "--accelerated-node-selector", help="key=value for GPU node components (repeatable).", show_default=False
        ),
    ] = None,
    accelerated_node_toleration: Annotated[
        list[str] | None,
        typer.Option(
            "--accelerated-node-toleration", help="key=value:Effect or key:Effect (repeatable).", show_default=False
        ),
    ] = None,
    workload_selector: Annotated[
        list[str] | None,
        typer.Option(
            "--workload-selector",
            help="key=value of workloads node tuning must not evict (repeatable).",
            show_default=False,
        ),
    ] = None,
    workload_gate: Annotated[
        str | None,
        typer.Option(
            "--workload-gate", help="Taint key=value:Effect held on new nodes until they are tuned.", show_default=False
        ),
    ] = None,
    nodes: Annotated[
        int | None, typer.Option("--nodes", help="GPU node count (0 = unset).", show_default=False)
    ] = None,
    data: opt.DataDir = None,
    catalog: opt.CatalogDir = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a non-empty output directory.")] = False,
    plain_http: registry_opt.PlainHttp = False,
    insecure_tls: registry_opt.InsecureTls = False,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """Write a deployment bundle: values, order and manifests for one deployer, plus checksums."""
    from shared import output as out
    from shared.bundle import oci, request, service

    build: Callable[[request.BundleRequest], BundleResult | publish.Published] = service.bundle
    if oci.is_reference(output):
        from shared.bundle import publish

        build = functools.partial(publish.bundle, target=output, plain_http=plain_http, insecure_tls=insecure_tls)
    result = build(
        request.BundleRequest(
            recipe=recipe,
            output=Path(output),
            deployer=deployer,
            sets=sets or [],
            repo=repo,
            system_node_selector=system_node_selector or [],
            system_node_toleration=system_node_toleration or [],
            accelerated_node_selector=accelerated_node_selector or [],
            accelerated_node_toleration=accelerated_node_toleration or [],
            workload_selector=workload_selector or [],
            workload_gate=workload_gate,
            nodes=nodes,
            data_dir=data,
            catalog_dir=catalog,
            force=force,
            kubeconfig=kubeconfig,
            context=context,
        )
    )
    out.write_data(result.text())


def register(app: typer.Typer) -> None:
    app.command("bundle")(bundle)
