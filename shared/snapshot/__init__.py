"""Snapshots of a live cluster and the drift between two of them.

Domain layer over ``shared.kube``: ``collect`` measures a cluster into the ``Snapshot`` document of
``shared.recipe.snapshot`` (type → subtype → key, upstream AICR's shape), ``source`` reads and writes
snapshots as files or ``cm://NAMESPACE/NAME`` ConfigMaps, ``diff`` compares two of them (or a recipe
with a snapshot). Measured data never holds timestamps, resourceVersions or generated pod names, so an
unchanged cluster gives byte-identical snapshots.
"""
