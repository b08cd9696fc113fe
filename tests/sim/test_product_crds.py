"""Every CustomResourceDefinition the product ships, checked as a real 1.34 API server checks it.

The CRDs come from the pydantic models (``shared.kube.crds.document`` for each ``RESOURCE`` the
chart lists) and from the chart's generated templates (``shared/chart/files/templates/crd-*.yaml``,
the same documents plus labels). A real server refuses a CRD whose schema is not structural
(apiextensions-apiserver:pkg/apis/apiextensions/validation/validation.go and
pkg/apiserver/schema/validation.go); ``structural.crd_errors`` reports what it would say, and
``crdcheck.decode_problems`` what its decoder would reject or warn about before that.

These tests assert the real outcome: a CRD that a real server refuses fails here, with the causes in
the failure message, until the generator emits an acceptable schema. The last test shows the one
change the current generator needs: without ``additionalProperties: false`` beside ``properties`` the
generated CRDs are accepted.
"""

from __future__ import annotations

import copy
import importlib
from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from shared.chart import crds as chart_crds
from shared.kube import crds
from shared.sim.apiserver import crdcheck
from shared.sim.apiserver.structural import crd_errors

TEMPLATES = Path(chart_crds.__file__).resolve().parent / "files" / "templates"
MODULES = [spec.module for spec in chart_crds.TEMPLATES]
FILES = [spec.file for spec in chart_crds.TEMPLATES]


def _model_crd(module: str) -> dict[str, Any]:
    return crds.document(importlib.import_module(module).RESOURCE)


def _template_crd(name: str) -> dict[str, Any]:
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("{{"))
    doc: dict[str, Any] = yamlio.loads(body, source=name)
    return doc


def _report(doc: dict[str, Any]) -> list[str]:
    unknown, decode_error = crdcheck.decode_problems(doc)
    found = [f"400 {decode_error}"] if decode_error else []
    found += [f"strict decoding: unknown field {path!r}" for path in unknown]
    found += [f"422 {e.text()}" for e in crd_errors(doc, old=None)]
    return found


@pytest.mark.parametrize("module", MODULES)
def test_the_crd_generated_from_each_model_is_accepted(module: str) -> None:
    problems = _report(_model_crd(module))
    assert not problems, f"a real API server refuses the {module} CRD:\n" + "\n".join(problems)


@pytest.mark.parametrize("name", FILES)
def test_each_chart_crd_template_is_accepted(name: str) -> None:
    problems = _report(_template_crd(name))
    assert not problems, f"a real API server refuses {name}:\n" + "\n".join(problems)


def _without_closed_objects(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _without_closed_objects(v) for k, v in node.items()}
        if "properties" in out and out.get("additionalProperties") is False:
            del out["additionalProperties"]
        return out
    if isinstance(node, list):
        return [_without_closed_objects(v) for v in node]
    return node


@pytest.mark.parametrize("module", MODULES)
def test_dropping_additional_properties_false_is_the_only_change_needed(module: str) -> None:
    doc = _without_closed_objects(copy.deepcopy(_model_crd(module)))
    assert _report(doc) == []
