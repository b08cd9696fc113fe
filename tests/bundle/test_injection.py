"""Hostile values stay data: in every deployer's files, and when the helm scripts run.

A recipe whose values, overrides and ``--set`` values hold quotes, newlines, ``{{ }}``, ``${…}``,
``$(…)``, backticks, ``---`` and YAML anchors is bundled by every deployer (its chart, version and
source as odd as their grammars allow). Covers: every YAML file parses, with one document per
object, and each hostile string comes back as an exact scalar; the argocd-helm templates carry no
value at all (values.yaml does); every script passes ``bash -n``; the helm deploy.sh and
undeploy.sh, run with stub ``helm`` and ``kubectl`` first on PATH, pass each hostile string as
exactly one argument and execute nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from tests.bundle import bundles
from tests.recipe import minicatalog

CANARY = "PWNED"
EVIL = {
    "quotes": "it's \"quoted\" '$(touch PWNED)'",
    "newline": "first\nsecond: injected\n---\nkind: Secret",
    "template": '{{ .Values.secret }}{{- include "x" . }}',
    "dollar_brace": "${HOME}${IFS}$(touch PWNED)",
    "backtick": "`touch PWNED`",
    "anchor": "&anchor [*anchor, !!python/object:os.system]",
    "marker": "---",
}
# Chart, version and source are refused at input when they leave their grammars
# (tests/bundle/test_reference_grammars.py); here they use the most the grammars allow.
SOURCE = "https://charts.example.com:8443/%24%28touch%20PWNED%29/a+b=c@d:e~f"
CHART = "evil-chart-2"
VERSION = "v1.0.0-rc.1+build-5.x"
OCI_SOURCE = "oci://registry.example.com:5000/a__b/c-d.e"
SET_VALUE = "x$(touch PWNED)'\"\n{{ .Release.Name }}"


def _recipe(tmp_path: Path) -> tuple[Path, Path]:
    cat = minicatalog.write(
        tmp_path / "cat",
        {
            "registry.yaml": {"apiVersion": minicatalog.API, "kind": "ComponentRegistry", "components": []},
            "components/evil/values.yaml": {"plain": dict(EVIL), "&key": "*value", "list": list(EVIL.values())},
            # A template printing the hostile values: what it prints stays data, never template text.
            "components/evil/manifests/cm.yaml": (
                "{{- $v := index .Values .Release.Name }}\n"
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n"
                "data:{{ toYaml $v.plain | nindent 2 }}\n"
            ),
        },
    )
    recipe = bundles.write_document(
        tmp_path / "recipe.yaml",
        {
            "kind": "RecipeResult",
            "apiVersion": minicatalog.API,
            "metadata": {"version": "0.1.0"},
            "componentRefs": [
                {
                    "name": "evil",
                    "namespace": "evil",
                    "type": "Helm",
                    "source": SOURCE,
                    "chart": CHART,
                    "version": VERSION,
                    "valuesFile": "components/evil/values.yaml",
                    "overrides": {"over": dict(EVIL)},
                    "manifestFiles": ["components/evil/manifests/cm.yaml"],
                },
                {
                    "name": "oci",
                    "namespace": "oci",
                    "type": "Helm",
                    "source": OCI_SOURCE,
                    "chart": CHART,
                    "version": VERSION,
                    "dependencyRefs": ["evil"],
                },
                {
                    "name": "plain",
                    "namespace": "plain",
                    "type": "Helm",
                    "source": "",
                    "valuesFile": "components/evil/values.yaml",
                    "manifestFiles": ["components/evil/manifests/cm.yaml"],
                    "dependencyRefs": ["oci"],
                },
            ],
            "deploymentOrder": ["evil", "oci", "plain"],
        },
    )
    return recipe, cat


@pytest.fixture(scope="module")
def evil_bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("evil")
    recipe, cat = _recipe(root)
    out = {}
    for deployer in bundles.DEPLOYERS:
        bundles.make_bundle(
            recipe,
            root / deployer,
            deployer,
            catalog_dir=cat,
            sets=[f"evil:from.set={SET_VALUE}"],
            # As odd as the repository grammar allows; a shell character is refused (tests/badinput).
            repo="https://git.example.com:8443/%24%28touch%20PWNED%29/r+e=p@o:s~i.git",
        )
        out[deployer] = root / deployer
    return out


def _scalars(documents: dict[str, list[Any]]) -> set[Any]:
    found: set[Any] = set()
    for docs in documents.values():
        for doc in docs:
            found.update(str(s) for s in yamlio.iter_scalars(doc))
            found.update(_keys(doc))
    return found


def _keys(data: Any) -> set[str]:
    if isinstance(data, dict):
        return set(map(str, data)) | {k for v in data.values() for k in _keys(v)}
    if isinstance(data, list):
        return {k for v in data for k in _keys(v)}
    return set()


@pytest.mark.parametrize("deployer", bundles.DEPLOYERS)
def test_hostile_strings_come_back_as_exact_scalars_in_every_yaml_file(
    evil_bundles: dict[str, Path], deployer: str
) -> None:
    documents = bundles.yaml_documents(evil_bundles[deployer])
    for rel, docs in documents.items():
        assert len(docs) == 1, rel  # a `---` inside a value never splits a file into more objects
        assert isinstance(docs[0], dict), rel
    scalars = _scalars(documents)
    for value in [*EVIL.values(), SET_VALUE, "&key", "*value"]:
        assert value in scalars, (deployer, value)
    if deployer != "helm":
        assert VERSION in scalars and CHART in scalars


def test_argocd_helm_templates_hold_no_value_only_references(evil_bundles: dict[str, Path]) -> None:
    root = evil_bundles["argocd-helm"]
    text = "".join(p.read_text() for p in (root / "templates").iterdir())
    for needle in ("touch", "quoted", "first", "anchor"):
        assert needle not in text
    values = yamlio.load_file(root / "values.yaml")
    assert values["components"]["evil"]["values"]["from"]["set"] == SET_VALUE
    assert values["components"]["evil"]["version"] == VERSION


def _stub(folder: Path, name: str, log: Path) -> None:
    script = folder / name
    script.write_text(
        f"#!/usr/bin/env python3\nimport json, sys\nwith open({str(log)!r}, 'a') as f:\n"
        f"    f.write(json.dumps([{name!r}, *sys.argv[1:]]) + '\\n')\n"
    )
    script.chmod(0o755)


def test_helm_scripts_pass_each_value_as_one_argument_and_run_nothing(
    evil_bundles: dict[str, Path], tmp_path: Path
) -> None:
    root = evil_bundles["helm"]
    stubs, log, work = tmp_path / "bin", tmp_path / "calls.jsonl", tmp_path / "cwd"
    stubs.mkdir()
    work.mkdir()
    for name in ("helm", "kubectl"):
        _stub(stubs, name, log)
    env = {**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}", "HOME": str(tmp_path)}
    for script in ("deploy.sh", "undeploy.sh"):
        proc = subprocess.run(
            ["bash", str(root / script)], cwd=work, env=env, capture_output=True, text=True, timeout=30, check=False
        )
        assert proc.returncode == 0, proc.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    installs = [c for c in calls if c[:3] == ["helm", "upgrade", "--install"]]
    (evil,) = [c for c in installs if c[3] == "evil"]
    assert evil[4] == CHART and evil[evil.index("--repo") + 1] == SOURCE
    assert evil[evil.index("--version") + 1] == VERSION
    (oci,) = [c for c in installs if c[3] == "oci"]
    assert oci[4] == f"{OCI_SOURCE}/{CHART}" and "--repo" not in oci
    assert ["helm", "uninstall", "evil", "--namespace", "evil", "--ignore-not-found"] in calls
    assert not list(tmp_path.rglob(f"*{CANARY}*")) and not list(root.rglob(f"*{CANARY}*"))


def test_every_script_is_valid_bash(evil_bundles: dict[str, Path]) -> None:
    scripts = sorted(evil_bundles["helm"].rglob("*.sh"))
    proc = subprocess.run(
        ["bash", "-c", 'rc=0; for f; do bash -n "$f" || rc=1; done; exit $rc', "_", *map(str, scripts)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
