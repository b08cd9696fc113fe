"""``aicr recipe`` and ``aicr query`` answered from the memo before typer loads (aicr/fast.py), and the
same as the full run.

Covers: which command lines the fast path takes and which it leaves to the full program; for each,
the console script in a fresh process (where typer's absence shows the path taken) against the
full program in this process, on the same cache: the same exit status, stdout, stderr and file
bytes, on a memo hit, a miss, a bad value, a repeated flag and a destination that cannot be written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from aicr import fast
from tests.cli.aicr import console

CRITERIA = ["--service", "eks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    written: bytes | None


@pytest.mark.parametrize(
    ("argv", "taken"),
    [
        (
            ["recipe", *CRITERIA, "-o", "r.yaml"],
            {**dict(zip(CRITERIA[::2], CRITERIA[1::2], strict=True)), "-o": "r.yaml"},
        ),
        (
            ["recipe", "--service=eks", "--gpu", "h100", "-t", "JSON"],
            {"--service": "eks", "--gpu": "h100", "-t": "JSON"},
        ),
        (["recipe", "--service", "eks", "--output=-"], {"--service": "eks", "--output": "-"}),
    ],
)
def test_a_plain_recipe_request_is_taken(argv: list[str], taken: dict[str, str]) -> None:
    expected = {fast.FLAGS[flag]: value for flag, value in taken.items()}
    assert fast.parse(argv) == expected


SELECTOR = "components.gpu-operator.values.driver.version"


def test_a_plain_query_is_taken_and_an_output_flag_is_not() -> None:
    argv = ["query", *CRITERIA, "--selector", SELECTOR, "-t", "json"]
    assert fast.parse(argv, command="query") == {
        **{fast.FLAGS[f]: v for f, v in zip(CRITERIA[::2], CRITERIA[1::2], strict=True)},
        "selector": SELECTOR,
        "fmt": "json",
    }
    assert fast.parse(["query", *CRITERIA, "--selector", SELECTOR, "-o", "x"], command="query") is None
    assert fast.parse(["query", *CRITERIA, "--selector", SELECTOR], command="recipe") is None


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["query", "--service", "eks", "--selector", "x"],
        ["--debug", "recipe", "--service", "eks"],
        ["recipe", "--service", "eks", "--explain"],
        ["recipe", "--service", "eks", "--nodes", "4"],
        ["recipe", "--service", "eks", "--catalog", "c"],
        ["recipe", "--service", "eks", "--service", "gke"],
        ["recipe", "--accelerator", "h100", "--gpu", "h100"],
        ["recipe", "--service", "--os", "ubuntu"],
        ["recipe", "--service"],
        ["recipe", "--service="],
        ["recipe", "-oout.yaml", "--service", "eks"],
        ["recipe", "--service", "eks", "--", "x"],
        ["recipe", "--service", "eks", "--help"],
    ],
)
def test_anything_else_is_left_to_the_full_program(argv: list[str]) -> None:
    assert fast.parse(argv) is None


def test_a_configmap_destination_or_a_debug_variable_runs_the_full_program(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fast.recipe(["recipe", "--service", "eks", "-o", "cm://aicr/recipe"]) is None
    monkeypatch.setenv("AICR_DEBUG", "0")
    assert fast.recipe(["recipe", "--service", "eks", "-o", "r.yaml"]) is None


def _console(argv: list[str], cwd: Path) -> tuple[Outcome, bool]:
    """The console script in a fresh process: its outcome, and whether typer was imported."""
    proc, loaded = console.run(argv, cwd)
    return Outcome(proc.returncode, proc.stdout, proc.stderr, _take(cwd / "r.yaml")), loaded


def _in_process(run_cli, argv: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> Outcome:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(cwd)
    result = run_cli("aicr", *argv)
    return Outcome(result.code, result.stdout, result.stderr, _take(cwd / "r.yaml"))


def _take(path: Path) -> bytes | None:
    if not path.exists():
        return None
    data = path.read_bytes()
    path.unlink()
    return data


HITS = [
    ["recipe", *CRITERIA, "-o", "r.yaml"],
    ["recipe", "--service=eks", "--gpu", "h100", "--os", "ubuntu", "--intent=training", "--output", "r.yaml"],
    ["recipe", *CRITERIA],
    ["recipe", *CRITERIA, "-t", "JSON", "-o", "-"],
    ["recipe", *CRITERIA, "--format", "table"],
    ["query", *CRITERIA, "--selector", SELECTOR],
    ["query", "--selector", "components.gpu-operator", *CRITERIA, "-t", "json"],
]
MISSES = [
    ["recipe", "--service", "eks", "--accelerator", "gb200", "--intent", "inference", "-o", "r.yaml"],
    ["recipe", "--service", "eks", "--accelerator", "h100", "--intent", "inference", "-t", "json"],
    ["query", *CRITERIA, "--selector", "components.gpu-operator.chart"],
]
"""Not in the memo, resolving without a warning: answered by the fast path, still without typer."""
FULL = [
    ["recipe", "--service", "gke", "--accelerator", "h100", "--intent", "training"],  # warns: base overlay only
    ["recipe", *CRITERIA, "-o", "r.yaml", "-o", "r.yaml"],
    ["recipe", "--service", "bogus", "-o", "r.yaml"],
    ["recipe", *CRITERIA, "-o", "missing/r.yaml"],
    ["recipe", *CRITERIA, "-o", "r.yaml", "--explain"],
    ["recipe", *CRITERIA, "-t", "csv"],
    ["query", *CRITERIA],
    ["query", *CRITERIA, "--selector", SELECTOR, "-t", "table"],
    ["query", *CRITERIA, "--selector", "components.nope"],
]


@pytest.fixture()
def warm(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # type: ignore[no-untyped-def]
    """A folder to run in, with the memo holding the seed's training recipe in each format, and two queries."""
    monkeypatch.chdir(tmp_path)
    for fmt in ("yaml", "json", "table"):
        assert run_cli("aicr", "recipe", *CRITERIA, "-t", fmt).code == 0
    assert run_cli("aicr", "query", *CRITERIA, "--selector", SELECTOR).code == 0
    assert run_cli("aicr", "query", *CRITERIA, "--selector", "components.gpu-operator", "-t", "json").code == 0
    return tmp_path


@pytest.mark.parametrize("argv", HITS, ids=lambda argv: " ".join(argv[1:]))
def test_a_memo_hit_skips_typer_and_gives_what_the_full_program_gives(
    run_cli,
    warm: Path,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    quick, typer_loaded = _console(argv, warm)
    assert not typer_loaded
    assert quick.code == 0 and (quick.stdout or quick.written)
    assert quick == _in_process(run_cli, argv, warm, monkeypatch)


@pytest.mark.parametrize("argv", MISSES, ids=" ".join)
def test_a_memo_miss_is_resolved_without_typer_as_the_full_program_resolves_it(
    run_cli,
    tmp_path: Path,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    import shutil

    from shared.recipe import memo

    full = _in_process(run_cli, argv, tmp_path, monkeypatch)  # resolves, and fills the memo
    shutil.rmtree(memo._cache_dir())
    quick, typer_loaded = _console(argv, tmp_path)
    assert not typer_loaded
    assert quick.code == 0 and (quick.stdout or quick.written)
    assert quick == full
    assert list(memo._cache_dir().glob("*.out"))  # the fast path keeps what it resolved


@pytest.mark.parametrize("argv", FULL, ids=lambda argv: " ".join(argv[1:]))
def test_what_the_fast_path_leaves_runs_the_full_program(
    run_cli,
    warm: Path,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    console, typer_loaded = _console(argv, warm)
    assert typer_loaded
    assert console == _in_process(run_cli, argv, warm, monkeypatch)


ONE_COMMAND = [
    ["recipe", "--help"],
    ["bundle", "--help"],
    ["query", "--help"],
    ["verify", "--help"],
    ["snapshot", "--help"],
    ["validate", "--help"],
    ["diff", "--help"],
    ["recipe", "--bogus"],
    ["recipe", "--servce", "eks"],
    ["recipe", "--service", "eks", "--service", "gke"],
    ["query", "--service", "eks"],
    ["verify"],
    ["bundle", "-r", "missing.yaml", "-o", "out"],
]


@pytest.mark.parametrize("argv", ONE_COMMAND, ids=" ".join)
def test_the_app_of_one_command_answers_as_the_whole_app(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from aicr import app
    from shared import cli

    monkeypatch.chdir(tmp_path)
    outcomes = []
    for built in (app.build_app(app.command_of(argv)), app.build_app()):
        code = cli.run(built, "aicr", argv, env_prefix="AICR", completers=app.PROGRAM.completers)
        captured = capsys.readouterr()
        outcomes.append((code, captured.out, captured.err))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] != 0 or "Usage: aicr" in outcomes[0][1]


def test_only_the_command_given_first_is_built_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from aicr import app

    assert app.command_of(["bundle", "-r", "r.yaml"]) == "bundle"
    assert [info.name for info in app.build_app("bundle").registered_commands] == ["bundle", "completion", "version"]
    for argv in ([], ["--help"], ["--debug", "recipe"], ["recpie"], ["completion", "bash"]):
        assert app.command_of(argv) is None
    monkeypatch.setenv("_AICR_COMPLETE", "bash_complete")
    assert app.command_of(["recipe"]) is None
