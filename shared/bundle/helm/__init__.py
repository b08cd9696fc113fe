"""Helm deployer: plain ``helm`` and ``kubectl`` commands in scripts, one numbered folder per component.

Writes::

    README.md                 what is inside, in order, and how to deploy it
    deploy.sh / undeploy.sh   every component in dependency order (reverse for undeploy)
    NNN-<name>/values.yaml    merged Helm values (components with a chart)
    NNN-<name>/install.sh     helm upgrade --install (+ kubectl apply of manifests/)
    NNN-<name>/uninstall.sh   the reverse
    NNN-<name>/manifests/     the component's extra manifests, applied after its chart

``NNN`` is the position in the deployment order, so ``ls`` shows the order and adding a component
renumbers nothing by hand. Every value in a script is one shell word (``shlex.quote``).
"""
