"""Argo CD deployer: an Application per component and an app-of-apps that syncs them in order.

Writes::

    README.md
    app-of-apps.yaml               Application "nvidia-stack": every */application.yaml of the repo
    NNN-<name>/application.yaml    Application <name>, sync wave NNN (its place in the order)
    NNN-<name>/values.yaml         merged Helm values, referenced through a ``$values`` source
    NNN-<name>/manifests/          extra manifests, a third source of the same Application

``--repo`` fills every repoURL that points at the bundle's own repository (upstream leaves the
literal ``{{ .RepoURL }}`` there). The bundle is expected at the root of that repository.
"""
