"""Validation of a live cluster against a recipe: constraints, then every component's health asserts.

Domain layer over ``shared.kube`` and ``shared.recipe``. It only reads: validation never writes to the
cluster. ``checks`` holds the pure evaluations over fetched objects, ``cluster`` the cached reads,
``run`` the (optionally waiting) orchestration and ``report`` the table and CTRF renderings.
"""
