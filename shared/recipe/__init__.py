"""Recipe resolution: from criteria to one version-pinned, ordered recipe.

Domain layer, above ``errors``/``yamlio``/``output``. Produces ``models.RecipeResult`` documents
(``aicr.run/v1alpha2``). Reads the catalog shipped in ``catalog/`` (our format) or an external one
in our format or upstream AICR's (``aicr.nvidia.com/v1alpha1``). Never touches a cluster.
"""
