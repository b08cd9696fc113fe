"""Bundles: one resolved recipe rendered for a deployer (helm, argocd, argocd-helm, flux, helmfile).

Domain layer, beside ``recipe/`` and above the base modules (``errors``, ``yamlio``, ``files``).
``plan`` turns a recipe file plus the ``aicr bundle`` flags into a ``BundlePlan`` (merged values,
scheduling, manifests, order); ``deployers.DEPLOYERS`` names the module that renders each
deployer, imported only when chosen so jinja2 loads only when a bundle is written; ``service``
writes the bundle into a staged folder renamed into place and ``checksums`` proves it unchanged
(``aicr verify``). Every bundle holds ``recipe.yaml``, ``README.md`` and ``checksums.txt``; each
deployer package's docstring lists the rest of what it writes. Never touches a cluster.
"""
