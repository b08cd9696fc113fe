"""Validation of a live cluster against a recipe: constraints, then every component's health asserts.

Domain layer over ``shared.kube``, ``shared.recipe`` and ``shared.snapshot``. It only reads:
validation never writes to the cluster. ``checks`` holds the pure evaluations over fetched
objects, ``cluster`` the cached reads, ``run`` the (optionally waiting) orchestration, ``report``
the table and CTRF renderings and ``service`` what ``aicr validate`` calls. It builds on the
snapshot package (loading documents, measuring the live cluster, reading Helm releases), which
never imports it.
"""
