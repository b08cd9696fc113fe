"""Failure-group isolation: which nodes (or links) made a group fail.

Pure functions from (nodes with topology, results so far) to the next groups or a verdict, so
they are unit-tested, property-tested and benchmarked without a cluster:

- ``model``: the data a strategy sees and returns;
- ``halving``: upstream NVCRE's diagnose algorithm (the baseline);
- ``adaptive``: our default, in two modes over one reference pool — ``hard`` (reading ``hardview``)
  and ``flaky`` (reading ``flakyview``), with ``screening``, ``references`` and ``linkprobes``;
- ``trial``: a fault oracle and a loop that drives a strategy to its verdict (tests, bench, render).

``STRATEGIES`` is the one table from name to function.
"""

from __future__ import annotations

from shared.certify.isolate import adaptive, halving, model

STRATEGIES: dict[str, model.Strategy] = {"adaptive": adaptive.adaptive, "halving": halving.halving}
DEFAULT = "adaptive"
