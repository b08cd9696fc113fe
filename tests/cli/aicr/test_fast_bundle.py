"""A plain ``aicr bundle`` rendered before typer loads (aicr/fast_bundle.py), and the same as the full run.

Covers: which command lines the path takes and which it leaves to the full program; for each
deployer, ``--force`` over an earlier bundle and every kind of refusal, the console script in a
fresh process against the full program in this process, in the same folder: the same exit status,
stdout and stderr, and the same tree (paths, bytes and modes), or nothing written on a refusal;
a rendered bundle never imports typer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from aicr import fast_bundle
from tests.cli.aicr import console

CRITERIA = ["--service", "eks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]
REPO = "https://git.example.com/gitops.git"


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    tree: dict[str, tuple[bytes, int]] | None


@pytest.mark.parametrize(
    ("argv", "taken"),
    [
        (["bundle", "-r", "r.yaml", "-o", "out"], {"recipe": "r.yaml", "output": "out"}),
        (
            ["bundle", "--recipe=r.yaml", "--deployer", "argocd", "--repo", REPO, "--output=out", "--force"],
            {"recipe": "r.yaml", "deployer": "argocd", "repo": REPO, "output": "out", "force": True},
        ),
        (
            ["bundle", "-o", "out", "-d", "flux", "-r", "r.yaml"],
            {"output": "out", "deployer": "flux", "recipe": "r.yaml"},
        ),
    ],
)
def test_a_plain_bundle_request_is_taken(argv: list[str], taken: dict[str, object]) -> None:
    assert fast_bundle.parse(argv) == taken


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["recipe", "-r", "r.yaml", "-o", "out"],
        ["bundle", "-r", "r.yaml"],
        ["bundle", "-o", "out"],
        ["bundle", "-r", "r.yaml", "-o", "out", "--set", "gpu-operator:enabled=false"],
        ["bundle", "-r", "r.yaml", "-o", "out", "--nodes", "4"],
        ["bundle", "-r", "r.yaml", "-o", "out", "-o", "out2"],
        ["bundle", "-r", "r.yaml", "-o", "out", "--force", "--force"],
        ["bundle", "-r", "r.yaml", "-o", "out", "--force=true"],
        ["bundle", "-r", "cm://aicr/recipe", "-o", "out"],
        ["bundle", "-r", "https://example.com/r.yaml", "-o", "out"],
        ["bundle", "-r", "r.yaml", "-o", "oci://localhost:5000/team/bundle"],
        ["bundle", "-r", "r.yaml", "-o", "-d"],
        ["bundle", "-r", "r.yaml", "-o", "out", "-d"],
        ["bundle", "-rr.yaml", "-o", "out"],
        ["bundle", "-r", "r.yaml", "-o", "out", "--debug"],
        ["bundle", "-r", "r.yaml", "-o", "out", "--help"],
        ["bundle", "-r", "r.yaml", "-o", "out", "--", "x"],
        ["--debug", "bundle", "-r", "r.yaml", "-o", "out"],
    ],
)
def test_anything_else_is_left_to_the_full_program(argv: list[str]) -> None:
    assert fast_bundle.parse(argv) is None


def test_a_debug_or_completion_variable_runs_the_full_program(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("AICR_DEBUG", "AICR_LOG_JSON", "_AICR_COMPLETE"):
        with monkeypatch.context() as patch:
            patch.setenv(variable, "0")
            assert fast_bundle.bundle(["bundle", "-r", "r.yaml", "-o", "out"]) is None


def _tree(folder: Path) -> dict[str, tuple[bytes, int]] | None:
    if not folder.exists():
        return None
    found = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        found[rel] = (path.read_bytes() if path.is_file() else b"", path.stat().st_mode)
    found["."] = (b"", folder.stat().st_mode)
    return found


def _console(argv: list[str], cwd: Path) -> tuple[Outcome, bool]:
    """The console script in a fresh process: its outcome, and whether typer was imported."""
    proc, loaded = console.run(argv, cwd)
    return Outcome(proc.returncode, proc.stdout, proc.stderr, _tree(cwd / "out")), loaded


def _in_process(run_cli, argv: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> Outcome:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(cwd)
    result = run_cli("aicr", *argv)
    return Outcome(result.code, result.stdout, result.stderr, _tree(cwd / "out"))


def _reset(cwd: Path, earlier: dict[str, tuple[bytes, int]] | None) -> None:
    """Put ``out`` back as it was before the first run (absent, or an earlier bundle)."""
    import shutil

    shutil.rmtree(cwd / "out", ignore_errors=True)
    if earlier is not None:
        (cwd / "out").mkdir()
        (cwd / "out" / "old.txt").write_text("an earlier run\n")


@pytest.fixture()
def folder(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # type: ignore[no-untyped-def]
    """A folder holding the seed's training recipe as r.yaml, and a recipe with a bad field as bad.yaml."""
    monkeypatch.chdir(tmp_path)
    assert run_cli("aicr", "recipe", *CRITERIA, "-o", "r.yaml").code == 0
    text = (tmp_path / "r.yaml").read_text()
    (tmp_path / "bad.yaml").write_text(text.replace("componentRefs:", "componentRefs:\n  - {name: 7, bogus: 1}", 1))
    return tmp_path


RENDERED = [
    ["bundle", "-r", "r.yaml", "-o", "out"],
    ["bundle", "-r", "r.yaml", "-d", "argocd", "--repo", REPO, "-o", "out"],
    ["bundle", "--recipe=r.yaml", "--deployer=argocd-helm", "--repo", REPO, "--output=out"],
    ["bundle", "-r", "r.yaml", "-d", "flux", "-o", "out"],
    ["bundle", "-r", "r.yaml", "-d", "helmfile", "-o", "out"],
]


@pytest.mark.parametrize("argv", RENDERED, ids=lambda argv: " ".join(argv[1:]))
def test_a_plain_bundle_skips_typer_and_writes_what_the_full_program_writes(
    run_cli,
    folder: Path,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    quick, typer_loaded = _console(argv, folder)
    assert not typer_loaded
    assert quick.code == 0, quick.stderr
    assert quick.tree is not None and "checksums.txt" in quick.tree
    _reset(folder, None)
    assert _in_process(run_cli, argv, folder, monkeypatch) == quick


REFUSED = [
    ["bundle", "-r", "r.yaml", "-o", "out"],  # over an earlier run's folder, without --force
    ["bundle", "-r", "r.yaml", "-o", "out", "--force"],  # replaces it
    ["bundle", "-r", "r.yaml", "-d", "bogus", "-o", "out"],
    ["bundle", "-r", "missing.yaml", "-o", "out"],
    ["bundle", "-r", "bad.yaml", "-o", "out"],
    ["bundle", "-r", "r.yaml", "-d", "argocd", "--repo", "https://git.example.com/a b.git", "-o", "out"],
    ["bundle", "-r", "r.yaml", "-o", "."],
]


@pytest.mark.parametrize("argv", REFUSED, ids=lambda argv: " ".join(argv[1:]))
def test_the_fast_path_refuses_and_replaces_as_the_full_program_does(
    run_cli,
    folder: Path,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    earlier = {"old.txt": (b"an earlier run\n", 0)} if argv[:5] == ["bundle", "-r", "r.yaml", "-o", "out"] else None
    _reset(folder, earlier)
    quick, _ = _console(argv, folder)
    _reset(folder, earlier)
    full = _in_process(run_cli, argv, folder, monkeypatch)
    assert quick == full
    if "--force" not in argv:
        assert quick.code == 2 and quick.stderr.startswith("error: ") and len(quick.stderr.splitlines()) == 1
        assert quick.tree is None or set(quick.tree) == {".", "old.txt"}  # nothing written, nothing removed
    else:
        assert quick.code == 0 and quick.tree is not None and "old.txt" not in quick.tree
