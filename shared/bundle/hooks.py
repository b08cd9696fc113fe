"""Helm hook annotations on catalog manifests, translated for the deployer that applies them.

Catalog manifests carry Helm hook annotations (upstream's Skyhook CR: ``helm.sh/hook:
post-install,post-upgrade``, weight 10, ``before-hook-creation``) so that, installed by Helm, they
land after the operator's CRD. Applied by anything else they mean something else: Argo CD treats
them as hooks (the object is recreated on every sync and not tracked), and so does Helm when
helmfile installs the manifests folder as a chart. Each deployer therefore gets its own reading:

- ``plain`` (flux, helmfile): the hook annotations are dropped; the object is an ordinary
  resource, ordered after its dependencies by the deployer (``dependsOn``, ``needs``);
- ``argocd`` (argocd, argocd-helm): an object meant to stay (no ``hook-succeeded`` /
  ``hook-failed`` delete policy) becomes a tracked resource in a sync wave, after the rest of its
  Application for ``post-*`` hooks (wave = weight, at least 1), before it for ``pre-*`` (wave =
  weight, at most -1); an object meant to be deleted after it ran (a Job) becomes an Argo CD hook,
  ``PreSync``/``PostSync``, with the matching ``hook-delete-policy``.

The helm deployer applies manifests with ``kubectl``, which ignores the annotations, and writes
them as rendered. Hooks for delete, rollback or test have no equivalent in a GitOps deployer and
are refused with the file. A manifest without hook annotations is written as rendered; one with
them is dumped again from its data (its comments are lost).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from shared import errors, yamlio
from shared.bundle.manifests import Manifest

HOOK = "helm.sh/hook"
WEIGHT = "helm.sh/hook-weight"
DELETE_POLICY = "helm.sh/hook-delete-policy"
PREFIX = "helm.sh/hook"
SYNC_WAVE = "argocd.argoproj.io/sync-wave"
ARGO_HOOK = "argocd.argoproj.io/hook"
ARGO_DELETE_POLICY = "argocd.argoproj.io/hook-delete-policy"
INSTALL_HOOKS = ("pre-install", "pre-upgrade", "post-install", "post-upgrade")
_ARGO_POLICIES = {
    "hook-succeeded": "HookSucceeded",
    "hook-failed": "HookFailed",
    "before-hook-creation": "BeforeHookCreation",
}

Translate = Callable[[Manifest], Manifest]


def _split(value: Any) -> list[str]:
    return [part.strip() for part in str(value or "").split(",") if part.strip()]


def _hook_annotations(doc: Any) -> dict[str, Any] | None:
    if not isinstance(doc, dict):
        return None
    annotations = (doc.get("metadata") or {}).get("annotations")
    if not isinstance(annotations, dict) or not any(str(k).startswith(PREFIX) for k in annotations):
        return None
    return annotations


def _phases(annotations: dict[str, Any], manifest: Manifest, deployer: str) -> list[str]:
    phases = _split(annotations.get(HOOK))
    unsupported = [p for p in phases if p not in INSTALL_HOOKS]
    if unsupported or not phases:
        what = ", ".join(unsupported) or "(empty)"
        raise errors.InvalidInput(
            f"Helm hook {what} has no equivalent in the {deployer} deployer (only {', '.join(INSTALL_HOOKS)})",
            where=f"{manifest.source} metadata.annotations.{HOOK}",
        )
    return phases


def _weight(annotations: dict[str, Any], manifest: Manifest) -> int:
    raw = annotations.get(WEIGHT, "0")
    try:
        return int(str(raw))
    except ValueError:
        raise errors.InvalidInput(
            f"hook weight must be an integer, got {raw!r}", where=f"{manifest.source} metadata.annotations.{WEIGHT}"
        ) from None


def _translate(manifest: Manifest, change: Callable[[dict[str, Any]], dict[str, Any]]) -> Manifest:
    if PREFIX not in manifest.text:
        return manifest  # no hook, no parse: CRD bundles of several hundred kilobytes pass as they are
    docs = yamlio.loads_all(manifest.text, source=manifest.source)
    if not any(_hook_annotations(doc) is not None for doc in docs):
        return manifest
    out: list[Any] = []
    for doc in docs:
        annotations = _hook_annotations(doc)
        if annotations is not None:
            kept = {k: v for k, v in annotations.items() if not str(k).startswith(PREFIX)}
            doc["metadata"]["annotations"] = change(annotations) | kept
            if not doc["metadata"]["annotations"]:
                del doc["metadata"]["annotations"]
        if doc is not None:
            out.append(doc)
    return replace(manifest, text=yamlio.dumps_all(out))


def plain(deployer: str) -> Translate:
    """Hook annotations dropped: the objects become ordinary resources (flux, helmfile)."""

    def translate(manifest: Manifest) -> Manifest:
        def change(annotations: dict[str, Any]) -> dict[str, Any]:
            _phases(annotations, manifest, deployer)
            _weight(annotations, manifest)
            return {}

        return _translate(manifest, change)

    return translate


def argocd(deployer: str) -> Translate:
    """Hook annotations as Argo CD reads them: sync waves for objects that stay, hooks for the rest."""

    def translate(manifest: Manifest) -> Manifest:
        def change(annotations: dict[str, Any]) -> dict[str, Any]:
            phases = _phases(annotations, manifest, deployer)
            weight = _weight(annotations, manifest)
            before = all(p.startswith("pre-") for p in phases)
            policies = _split(annotations.get(DELETE_POLICY))
            if not {"hook-succeeded", "hook-failed"} & set(policies):
                return {SYNC_WAVE: str(min(weight, -1) if before else max(weight, 1))}
            argo = {ARGO_HOOK: "PreSync" if before else "PostSync"}
            mapped = [_ARGO_POLICIES[p] for p in policies if p in _ARGO_POLICIES]
            if mapped:
                argo[ARGO_DELETE_POLICY] = ",".join(mapped)
            if weight:
                argo[SYNC_WAVE] = str(weight)
            return argo

        return _translate(manifest, change)

    return translate


def unchanged(manifest: Manifest) -> Manifest:
    """As rendered (the helm deployer: ``kubectl apply`` ignores hook annotations)."""
    return manifest
