"""The chart's values as Helm computes them: values files, ``--set``, ``--set-string``, then the chart's own.

Helm (``pkg/cli/values/options.go`` ``MergeValues``, then ``pkg/chartutil/coalesce.go``) builds the
user values first, each values file merged over the last (``shared.merge.deep_merge``, which is
Helm's ``mergeMaps``: maps key by key, anything else, ``null`` included, replaces), then reads
every ``--set`` into them in order, then every ``--set-string`` (after all ``--set``, whatever the
command-line order), and only then coalesces
them over the chart's ``values.yaml``: a user value wins, maps merge, and a user ``null`` deletes
the chart's key (a ``null`` where the chart has no key stays null). This module does the same, so
``l[1]=x`` changes one item of a list a values file gave, and ``a.b=1`` over a string from a values
file fails with helm's message.

Values hold what Helm's hold after its YAML → JSON → Go round trip: every number of a YAML file is
a float (Go float64; ``1000000`` prints as ``1e+06``), ``--set`` integers are ints (Go int64), keys
are strings. Values files are read as YAML 1.2 by ``shared.yamlio``, where Helm reads YAML 1.1:
plain ``yes``/``no``/``on``/``off``/``y``/``n``, ``0777`` and ``1_000`` differ (docs/compatibility.md).
"""

from __future__ import annotations

import copy
import datetime
import logging
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from shared import errors, merge, strvals, yamlio
from shared.chart import gofmt

logger = logging.getLogger(__name__)


def helm_shaped(data: Any) -> Any:
    """YAML data as Helm holds it after ``sigs.k8s.io/yaml``: numbers float, keys strings, dates text."""
    if isinstance(data, dict):
        return {_key(key): helm_shaped(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [helm_shaped(item) for item in data]
    return _scalar(data)


def _scalar(data: Any) -> Any:
    if isinstance(data, bool) or data is None or isinstance(data, str | float):
        return data
    if isinstance(data, int):
        try:
            return float(data)
        except OverflowError:
            return str(data)
    if isinstance(data, datetime.date):
        # go-yaml keeps a timestamp as the text it read.
        return data.isoformat()
    return str(data)


def _key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return gofmt.format_float_g(key)
    return str(key)


def read_file(text: str, *, source: str) -> dict[str, Any]:
    """A values file: a mapping (or nothing, read as an empty mapping); anything else is InvalidInput."""
    data = yamlio.loads(text, source=source)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise errors.InvalidInput("a values file must hold a mapping", where=source)
    shaped: dict[str, Any] = helm_shaped(data)
    return shaped


def chart_defaults(root: Traversable) -> dict[str, Any]:
    return read_file(root.joinpath("values.yaml").read_text(encoding="utf-8"), source="values.yaml")


def user_values(
    *, files: tuple[Path, ...] = (), sets: tuple[str, ...] = (), set_strings: tuple[str, ...] = ()
) -> dict[str, Any]:
    """What the user gave, in Helm's order: files, then every ``--set``, then every ``--set-string``.

    InvalidInput names the file, or the flag and the expression, with helm's message.
    """
    values: dict[str, Any] = {}
    for path in files:
        values = merge.deep_merge(values, read_file(yamlio.read_text(path), source=str(path)))
    for expression in sets:
        strvals.parse_into(expression, values, flag="--set")
    for expression in set_strings:
        strvals.parse_into(expression, values, as_string=True, flag="--set-string")
    return values


def coalesce(chart: dict[str, Any], user: dict[str, Any], *, prefix: str) -> dict[str, Any]:
    """helm's ``CoalesceValues`` for a chart without dependencies: user values over the chart's.

    Neither argument is changed. ``prefix`` is the chart name, for the warnings Helm also prints.
    """
    out = copy.deepcopy(user)
    _coalesce_table(out, copy.deepcopy(chart), prefix, top=True)
    return out


def _coalesce_table(dst: dict[str, Any], src: dict[str, Any], prefix: str, *, top: bool) -> None:
    for key, value in src.items():
        full = f"{prefix}.{key}"
        if key not in dst:
            dst[key] = value
            continue
        current = dst[key]
        if current is None:
            del dst[key]
        elif isinstance(current, dict):
            if isinstance(value, dict):
                _coalesce_table(current, value, full, top=False)
            elif value is not None and top:
                logger.warning("skipped value for %s: Not a table.", full)
            elif value is not None:
                logger.warning("destination for %s is a table. Ignoring non-table value (%s)", full, value)
        elif isinstance(value, dict) and not top:
            logger.warning("cannot overwrite table with non table for %s (%s)", full, value)


def for_render(
    root: Traversable,
    *,
    chart_name: str,
    files: tuple[Path, ...] = (),
    sets: tuple[str, ...] = (),
    set_strings: tuple[str, ...] = (),
) -> dict[str, Any]:
    """``.Values`` of a render: the user's values coalesced over the chart's ``values.yaml``."""
    user = user_values(files=files, sets=sets, set_strings=set_strings)
    return coalesce(chart_defaults(root), user, prefix=chart_name)
