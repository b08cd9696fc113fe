"""The one deep merge of nested mappings: Helm's rules for layering values files.

Base module (standard library only). Every "this document over that one" in the programs goes
through ``deep_merge``: a recipe component's Helm values (default file, overlay file, inline
overrides), nvsentinel's configuration over its embedded defaults, and a chart's values files
(``helm template -f a.yaml -f b.yaml``).

The rules are Helm's ``mergeMaps`` (helm ``pkg/cli/values/options.go``), which merges each values
file over the ones before it:

- A key whose value is a mapping in both ``base`` and ``over`` is merged by these same rules.
- Any other value of ``over`` replaces ``base``'s whole: a list is replaced, never appended to or
  merged item by item; a scalar replaces a mapping and a mapping replaces a scalar.
- ``None`` (YAML ``null``) in ``over`` is a value like any other: it replaces, it does not delete.
  Deleting a key with ``null`` is Helm's later step, coalescing the user's values over the chart's
  own ``values.yaml`` (``shared.chart.values.coalesce``), which this module leaves out.
- Keys only in ``base`` are kept. The result lists ``base``'s keys in their order, then the keys new
  in ``over`` in theirs.
- Nothing is shared or changed: the result is a new tree holding copies, so a caller may change it
  (apply ``--set``, fill defaults) without touching either argument, a cached catalog file above all.

Not associative: ``(a + {k: 1}) + {k: {...}}`` loses ``a[k]`` while ``a + ({k: 1} + {k: {...}})``
keeps it, as in Helm, so layers are applied in order, lowest first.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """A new mapping: ``over`` merged over ``base`` by the rules of this module; neither is changed."""
    merged: dict[str, Any] = {}
    for key, value in base.items():
        if key not in over:
            merged[key] = copy.deepcopy(value)
            continue
        top = over[key]
        if isinstance(value, dict) and isinstance(top, dict):
            merged[key] = deep_merge(value, top)
        else:
            merged[key] = copy.deepcopy(top)
    for key, value in over.items():
        if key not in base:
            merged[key] = copy.deepcopy(value)
    return merged
