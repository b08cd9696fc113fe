"""argocd-helm deployer: the app-of-apps as a Helm chart, so the stack is configured through values.

Writes::

    Chart.yaml                  the chart (apiVersion v2)
    values.yaml                 repoURL/targetRevision of the bundle's repository, Argo CD settings,
                                and per component: enabled, source, version, syncWave, values
    values.schema.json          JSON Schema of values.yaml (Helm checks it on install)
    templates/<name>.yaml       one Argo CD Application per component (Helm template)
    manifests/NNN-<name>/       extra manifests, a second source of the component's Application
    .helmignore                 keeps manifests/, recipe.yaml and checksums.txt out of the chart
    README.md

Install it into the Argo CD namespace (``helm install stack . -n argocd``) or point an Argo CD
Application at it. Component values live in values.yaml, so a component is switched off or
retuned with ``--set components.<name>.enabled=false`` at install time.
"""
