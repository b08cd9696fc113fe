"""The generated command reference (docs/reference/) matches the programs' command trees.

Covers: the committed pages equal a fresh rendering (so a new command or flag fails until
`make reference` is run); one page per program and no stale page; the rendering does not depend on
the terminal width; every command of every program has its section.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shared import cli_reference

DOCS = Path(__file__).resolve().parent.parent / "docs" / "reference"


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    return cli_reference.render_all()


def test_committed_reference_matches_the_programs(rendered: dict[str, str]) -> None:
    for name, text in rendered.items():
        path = DOCS / name
        assert path.is_file(), f"run `{cli_reference.REGENERATE}`: {path} is missing"
        assert path.read_text(encoding="utf-8") == text, f"run `{cli_reference.REGENERATE}`: {name} is stale"


def test_there_is_one_page_per_program_and_no_other(rendered: dict[str, str]) -> None:
    assert sorted(p.name for p in DOCS.glob("*.md")) == sorted(rendered)
    assert sorted(rendered) == sorted(f"{program}.md" for program in cli_reference.PROGRAMS)


def test_rendering_ignores_the_terminal_width(rendered: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "20")
    monkeypatch.setenv("LINES", "5")
    assert cli_reference.render_all() == rendered


@pytest.mark.parametrize("program", sorted(cli_reference.PROGRAMS))
def test_every_command_has_a_section(program: str, rendered: dict[str, str]) -> None:
    page = rendered[f"{program}.md"]
    paths = cli_reference.command_paths(program, cli_reference.load_app(program))
    assert len(paths) > 5
    for path in paths:
        assert f"## `{path}`\n" in page, path
