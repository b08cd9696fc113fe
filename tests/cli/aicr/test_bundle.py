"""``aicr bundle`` end to end through the entry wrapper.

Covers: the summary printed on stdout (title, directory, file count, notes, next steps) for each
deployer; bad input (missing recipe, unknown deployer, bad --set, non-empty output without
--force, a repeated flag) exiting 2 with one stderr line and writing nothing; --force replacing a
bundle; ``aicr bundle --help`` loading none of jinja2, kubernetes, celpy or networkx.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bundle import bundles
from tests.recipe import minicatalog


@pytest.fixture()
def cat_dir(tmp_path: Path) -> Path:
    return minicatalog.write(tmp_path / "cat", minicatalog.default_documents())


@pytest.fixture()
def recipe(cat_dir: Path, tmp_path: Path) -> Path:
    from shared.recipe import catalog

    return bundles.write_recipe(tmp_path / "recipe.yaml", cat=catalog.load_directory(cat_dir), service="eks")


STEPS = {
    "helm": ["  1. cd {out}", "  2. ./deploy.sh"],
    "argocd": [
        "  1. Push the contents of {out} to the root of https://git.example.com/r.git",
        "  2. kubectl apply -f {out}/app-of-apps.yaml",
    ],
    "argocd-helm": [
        "  1. Push the contents of {out} to the root of https://git.example.com/r.git",
        "  2. helm install aicr-stack {out} --namespace argocd",
    ],
    "flux": [
        "  1. Push the contents of {out} to the root of the repository Flux syncs (GitRepository "
        "flux-system/flux-system)",
        "  2. kubectl apply -k {out}   (or let a Flux Kustomization reconcile the folder)",
    ],
    "helmfile": ["  1. cd {out}", "  2. helmfile apply"],
}
TITLES = {
    "helm": "Helm bundle",
    "argocd": "Argo CD applications",
    "argocd-helm": "Argo CD app-of-apps Helm chart",
    "flux": "Flux bundle",
    "helmfile": "helmfile bundle",
}


@pytest.mark.parametrize("deployer", bundles.DEPLOYERS)
def test_bundle_prints_a_summary_and_the_next_steps(
    run_cli,
    recipe: Path,
    cat_dir: Path,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    deployer: str,
) -> None:
    out = tmp_path / "out"
    result = run_cli(
        "aicr",
        "bundle",
        "-r",
        str(recipe),
        "-o",
        str(out),
        "-d",
        deployer,
        "--catalog",
        str(cat_dir),
        "--repo",
        "https://git.example.com/r.git",
    )
    assert result.code == 0, result.stderr
    files = sum(1 for p in out.rglob("*") if p.is_file())
    assert result.stdout.splitlines() == [
        "",
        f"{TITLES[deployer]} generated successfully!",
        f"Output directory: {out}",
        f"Files generated: {files}",
        "",
        "To deploy:",
        *[s.format(out=out) for s in STEPS[deployer]],
    ]
    assert result.stderr == ""


def test_notes_are_listed_before_the_steps(run_cli, recipe: Path, cat_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_cli(
        "aicr", "bundle", "-r", str(recipe), "-o", str(tmp_path / "o"), "-d", "argocd", "--catalog", str(cat_dir)
    )
    lines = result.stdout.splitlines()
    assert lines[4:7] == [
        "",
        "Note:",
        "  - --repo not set: replace https://github.com/YOUR-ORG/YOUR-REPO.git in "
        "every application.yaml and app-of-apps.yaml before applying",
    ]


BAD = [
    ("missing-recipe", ["-r", "{tmp}/none.yaml"], "error: {tmp}/none.yaml: file does not exist"),
    (
        "unknown-deployer",
        ["-d", "fleet"],
        "error: --deployer: invalid deployer 'fleet': allowed values are helm, argocd, argocd-helm, flux, helmfile",
    ),
    (
        "unknown-component",
        ["--set", "nope:a=1"],
        "error: --set 'nope:a=1': unknown component 'nope'; the recipe has: alpha, beta, gamma",
    ),
    (
        "through-scalar",
        ["--set", "alpha:replicas.x=1"],
        "error: --set 'alpha:replicas.x=1': cannot set replicas.x: replicas is a scalar (int), not a map",
    ),
    (
        "bad-toleration",
        ["--system-node-toleration", "k=v"],
        "error: --system-node-toleration: expected key=value:Effect",
    ),
    ("repeated-flag", ["-d", "helm", "--deployer", "flux"], "error: flag --deployer can only be specified once"),
]


@pytest.mark.parametrize(("args", "expected"), [(a, e) for _, a, e in BAD], ids=[n for n, _, _ in BAD])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    run_cli,
    recipe: Path,
    cat_dir: Path,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    args: list[str],
    expected: str,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "-r" not in argv:
        argv = ["-r", str(recipe), *argv]
    result = run_cli("aicr", "bundle", *argv, "-o", str(work / "out"), "--catalog", str(cat_dir))
    assert result.code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected.replace("{tmp}", str(tmp_path))), result.stderr
    assert list(work.iterdir()) == []


def test_a_non_empty_output_needs_force(run_cli, recipe: Path, cat_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    args = ["bundle", "-r", str(recipe), "-o", str(out), "--catalog", str(cat_dir)]
    assert run_cli("aicr", *args).code == 0
    again = run_cli("aicr", *args)
    assert again.code == 2
    assert again.stderr == f"error: {out}: output directory is not empty (use --force to replace it)\n"
    assert run_cli("aicr", *args, "--force").code == 0


def test_bundle_help_loads_none_of_the_heavy_libraries() -> None:
    probe = (
        "import json, sys\nfrom shared import cli\nfrom aicr.main import build_app\n"
        "code = cli.run(build_app(), 'aicr', ['bundle', '--help'])\n"
        "print(json.dumps({'code': code, 'modules': sorted({m.split('.')[0] for m in sys.modules})}))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["code"] == 0
    assert set(report["modules"]).isdisjoint({"jinja2", "kubernetes", "celpy", "networkx"})
