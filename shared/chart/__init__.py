"""The Helm chart of the in-cluster controllers, and rendering it without Helm.

A domain package over ``shared.kube`` (CRD documents) and ``shared.yamlio``:

- ``files/``: the chart itself (Chart.yaml, values.yaml, templates/), also reachable as
  ``deploy/helm/dsx-cluster-tools``; shipped in the wheel so ``manifests`` works from an install;
- ``template``: the documented subset of Helm's template language, parsed and rendered;
- ``manifests``: values (files, ``--set``), rendering, Helm's install order, per-program selection;
- ``crds``: the CRD templates, generated from the resource models.
"""
