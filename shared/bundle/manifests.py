"""A component's extra manifests, rendered with its values at bundle time.

Catalog manifests (ours and upstream AICR's, read through ``--catalog``/``--data``) are templates
in the chart's template subset (:mod:`shared.chart.template`, one engine for the chart and for
manifests), rendered as upstream's bundler renders them: ``.Values`` holds the component's merged
values under its name, ``.Release.Namespace`` its namespace, ``.Release.Service`` ``Helm``,
``.Chart.Name``/``.Chart.Version`` its chart and version (no leading ``v``, ``0.1.0`` without
one), with upstream's manifest functions (``default`` keeps ``false``). A plain YAML file is a
template without actions and comes out as written. A construct outside the subset, or a value a
template prints that is not there, is InvalidInput naming the catalog file and line.

A rendered file holding no object (only comments, blank lines and ``---``) is left out, as
upstream leaves it out. What each rendering read is kept (:class:`Rendered`), so the plan can tell
whether a flag or a ``--set`` reached a manifest of a component that has no chart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from shared.chart import template

RELEASE_SERVICE = "Helm"
DEFAULT_CHART_VERSION = "0.1.0"


@dataclass(frozen=True)
class Manifest:
    """One extra manifest of a component: file name in the bundle, catalog path, rendered content."""

    name: str
    source: str
    text: str


@dataclass
class Rendered:
    """The manifests of one component that hold an object, and what rendering them read."""

    manifests: list[Manifest] = field(default_factory=list)
    reads: template.Reads = field(default_factory=template.Reads)

    def read(self, values: dict[str, Any], path: tuple[str, ...]) -> bool:
        """Whether some manifest used the value at ``path`` of ``values`` (the dict rendered)."""
        return self.reads.covers(values, path)


def chart_version(version: str) -> str:
    """``.Chart.Version`` as upstream gives it: the version without a leading ``v``, or 0.1.0."""
    return version.removeprefix("v") or DEFAULT_CHART_VERSION


def holds_object(text: str) -> bool:
    """Whether rendered text has a line that is not blank, a comment or a document marker."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped not in ("---", "..."):
            return True
    return False


def render(
    sources: list[tuple[str, str]],
    *,
    component: str,
    chart: str,
    version: str,
    namespace: str,
    values: dict[str, Any],
) -> Rendered:
    """Render each ``(catalog path, text)`` with ``values``; raises TemplateError (InvalidInput) naming file:line."""
    context = {
        "Values": {component: values},
        "Release": {"Name": component, "Namespace": namespace, "Service": RELEASE_SERVICE},
        "Chart": {"Name": chart, "Version": chart_version(version)},
    }
    rendered = Rendered()
    for source, text in sources:
        parsed = template.parse(text, name=source)
        out = template.render(parsed, context, reads=rendered.reads, funcs=template.MANIFEST_FUNCS)
        if holds_object(out):
            rendered.manifests.append(Manifest(name=PurePosixPath(source).name, source=source, text=out))
    return rendered
