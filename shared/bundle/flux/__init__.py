"""Flux deployer: a source and a HelmRelease per component, ordered with ``spec.dependsOn``.

Writes::

    kustomization.yaml                kustomize list of every object below (apply it, or point a
                                      Flux Kustomization at the folder)
    NNN-<name>/source.yaml            HelmRepository (https) or OCIRepository (oci://), source.toolkit.fluxcd.io/v1
    NNN-<name>/helmrelease.yaml       HelmRelease helm.toolkit.fluxcd.io/v2, values inline, dependsOn
    NNN-<name>/manifests/             extra manifests with their own kustomization.yaml
    NNN-<name>/manifests-sync.yaml    Flux Kustomization applying manifests/ from the GitRepository
    README.md

Every object lives in the ``flux-system`` namespace and releases into the component's namespace.
A HelmRelease can only wait for other HelmReleases, so a release that depends on a manifest-only
component waits for that component's own chart dependencies instead; manifests are retried every
minute until the CRDs their chart installs exist. Kustomize components are not supported here.
"""
