"""helmfile deployer: one helmfile.yaml whose releases wait for their dependencies with ``needs:``.

Writes::

    helmfile.yaml               repositories, helmDefaults (wait, 600 s timeout, createNamespace),
                                one release per component with needs: from dependencyRefs
    NNN-<name>/values.yaml      merged Helm values of the release
    NNN-<name>/manifests/       extra manifests, deployed as release ``<name>-manifests`` (helmfile
                                turns a folder of plain manifests into a chart), after the chart
    README.md

Needs helmfile v1 or later (which does not template a plain ``helmfile.yaml``). Kustomize
components are not supported here.
"""
