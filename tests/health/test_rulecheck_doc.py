"""docs/nvsentinel.md's ``rules check`` table is what ``rules check`` says, row for row.

Covers: each row's example, written into the file the doc describes, makes ``rules check`` exit 1
with exactly the row's line (file, line, column, rule set); and each example rule really fails or
never matches at run time, on a sample event written so the rule's intent holds (RESTART_BM, Xid 79),
or, for a syntax error, fails the load. So neither the doc nor the checker can drift.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from shared import cel, errors
from shared.health import config, ruleset, samples, settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "nvsentinel.md"
RULE_FILE = """\
fault-quarantine:
  ruleSets:
    - name: "r"
      match:
        all:
          - kind: {kind}
            expression: "{expression}"
      cordon: {{shouldCordon: true}}
"""


def _rows() -> list[tuple[str, str, str, str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## rules check: what it refuses", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| Mistake"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        mistake, kind, example, said = cells
        rows.append((mistake, kind.strip("`"), example.strip("`"), said.strip("`")))
    return rows


ROWS = _rows()


def _file(kind: str, example: str) -> str:
    if kind in ("HealthEvent", "Node"):
        return RULE_FILE.format(kind=kind, expression=example)
    *parents, last = kind.split(".")
    lines = [f"{'  ' * i}{part}:" for i, part in enumerate(parents)]
    return "\n".join([*lines, f"{'  ' * len(parents)}{last}: '{example}'"]) + "\n"


def test_the_table_has_every_kind_of_mistake() -> None:
    assert len(ROWS) >= 15
    assert {"HealthEvent", "Node", "fault-quarantine.circuitBreaker.duration", "fault-quarantine.gpuNodeLabel"} <= {
        kind for _, kind, _, _ in ROWS
    }


@pytest.mark.parametrize(("mistake", "kind", "example", "said"), ROWS, ids=[r[0] for r in ROWS])
def test_rules_check_says_what_the_doc_says(
    run_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mistake: str, kind: str, example: str, said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("values.yaml").write_text(_file(kind, example))
    result = run_cli("nvsentinel", "rules", "check", "-f", "values.yaml")
    assert (result.code, result.stderr) == (1, said + "\n"), mistake
    if kind in ("HealthEvent", "Node"):
        assert re.match(r"error: values\.yaml:\d+:\d+: rule set 'r': ", said), said


@pytest.mark.parametrize(
    ("mistake", "kind", "example"),
    [r[:3] for r in ROWS if r[1] in ("HealthEvent", "Node")],
    ids=[r[0] for r in ROWS if r[1] in ("HealthEvent", "Node")],
)
def test_each_refused_rule_fails_or_never_matches_at_run_time(
    tmp_path: Path, mistake: str, kind: str, example: str
) -> None:
    try:
        cel.compile(example, name="r")
    except errors.InvalidInput:
        path = tmp_path / "values.yaml"
        path.write_text(_file(kind, example))
        with pytest.raises(errors.InvalidInput):
            config.load(path)
        return
    spec = settings.RuleSet(name="r", match=settings.Match(all=[settings.Rule(kind=kind, expression=example)]))  # type: ignore[arg-type]
    engine = ruleset.Engine(ruleset.compile_rule_sets([spec]))
    decision = engine.decide(samples.EVENT.cel_value(), samples.NODE)
    assert decision.matched == [], mistake
