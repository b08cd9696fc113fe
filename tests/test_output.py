"""The one output module (shared/output.py): the format switch, declared tables and streams.

Covers: ``emit`` writes data as indented JSON or YAML (pydantic models dumped, ``exclude_none`` as
asked) and a table as aligned text with upper-case headers; ``-o wide`` shows the wide columns, or
a separate wide view when one is given; laid-out text prints as it is; a destination receives any
format as text; a list cell is comma-joined; a table format without a table is a programming
error. A ``Stream`` writes each batch as NDJSON at once with ``-o json`` (one sorted-key object per
line) and shows nothing more at its end; in the other formats it shows every item once at the end.
``acted`` writes kubectl's ``KIND/NAME VERB`` lines; ``error_lines`` one ``error:`` line per problem.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from shared import output as out
from shared import yamlio

ROWS = [{"node": "n1", "causes": ["a", "b"], "state": "held"}, {"node": "n[2]", "causes": [], "state": "-"}]
COLUMNS = (
    out.Column.key("NODE", "node"),
    out.Column.key("STATE", "state", wide=True),
    out.Column.key("CAUSES", "causes"),
)


class Item(BaseModel):
    name: str
    note: str | None = None


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        (out.Format.TABLE, "NODE  CAUSES\nn1    a, b\nn[2]\n"),
        (out.Format.WIDE, "NODE  STATE  CAUSES\nn1    held   a, b\nn[2]  -\n"),
        (out.Format.JSON, json.dumps(ROWS, indent=2) + "\n"),
    ],
    ids=["table-leaves-out-wide-columns", "wide-adds-them", "json-is-the-data"],
)
def test_emit_switches_on_the_format(capsys: pytest.CaptureFixture[str], fmt: out.Format, expected: str) -> None:
    out.emit(ROWS, fmt, table=out.Table(ROWS, COLUMNS))
    assert capsys.readouterr().out == expected


def test_a_separate_wide_view_replaces_the_table_only_for_wide(capsys: pytest.CaptureFixture[str]) -> None:
    table, wide = out.Table(ROWS, COLUMNS[:1]), out.Table(ROWS[:1], (out.Column.key("STATE", "state"),))
    out.emit(ROWS, out.Format.WIDE, table=table, wide=wide)
    out.emit(ROWS, out.Format.TABLE, table=table, wide=wide)
    assert capsys.readouterr().out == "STATE\nheld\nNODE\nn1\nn[2]\n"


def test_models_are_dumped_for_the_data_formats(capsys: pytest.CaptureFixture[str]) -> None:
    items = [Item(name="a"), Item(name="b", note="x")]
    out.emit(items, out.Format.YAML, table="unused\n", exclude_none=True)
    assert yamlio.loads(capsys.readouterr().out, source="-") == [{"name": "a"}, {"name": "b", "note": "x"}]
    out.emit(items[0], out.Format.JSON)
    assert capsys.readouterr().out == '{\n  "name": "a",\n  "note": null\n}\n'


def test_laid_out_text_prints_as_it_is_and_a_destination_takes_every_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out.emit({"a": 1}, out.Format.TABLE, table="REPORT\n")
    out.emit(ROWS, out.Format.TABLE, table=out.Table(ROWS, COLUMNS), destination=tmp_path / "t.txt")
    out.emit({"a": 1}, out.Format.JSON, table="REPORT\n", destination=tmp_path / "d.json")
    assert capsys.readouterr().out == "REPORT\n"
    assert (tmp_path / "t.txt").read_text() == "NODE  CAUSES\nn1    a, b\nn[2]\n"
    assert json.loads((tmp_path / "d.json").read_text()) == {"a": 1}


def test_a_table_format_without_a_table_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="needs a table"):
        out.emit([], out.Format.TABLE)


def test_a_json_stream_writes_each_batch_as_ndjson_when_it_arrives(capsys: pytest.CaptureFixture[str]) -> None:
    stream = out.Stream(out.Format.JSON, record=lambda item: {"z": item, "a": [item]})
    stream.add([1, 2])
    assert capsys.readouterr().out == '{"a": [1], "z": 1}\n{"a": [2], "z": 2}\n'
    stream.add([])
    stream.add([3])
    stream.close(columns=(out.Column("N", lambda item: item),))
    assert capsys.readouterr().out == '{"a": [3], "z": 3}\n'


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [(out.Format.TABLE, "N\n1\n2\n3\n"), (out.Format.YAML, "  - z: 1\n  - z: 2\n  - z: 3\n")],
    ids=["table", "yaml"],
)
def test_other_streams_show_every_item_once_at_the_end(
    capsys: pytest.CaptureFixture[str], fmt: out.Format, expected: str
) -> None:
    stream = out.Stream(fmt, record=lambda item: {"z": item})
    stream.add([1, 2])
    stream.add([3])
    assert capsys.readouterr().out == ""
    stream.close(columns=(out.Column("N", lambda item: item),))
    assert capsys.readouterr().out == expected


def test_acted_and_error_lines_follow_kubectls_habits(capsys: pytest.CaptureFixture[str]) -> None:
    out.acted("customresourcedefinition", ["a.example.com", "b.example.com"], "installed")
    out.acted("node", ["n1"], "cordoned (owner drift)", to_stderr=True)
    out.error_lines(["x.yaml:3: bad", "x.yaml:9: worse"])
    captured = capsys.readouterr()
    assert (
        captured.out
        == "customresourcedefinition/a.example.com installed\ncustomresourcedefinition/b.example.com installed\n"
    )
    assert captured.err == "node/n1 cordoned (owner drift)\nerror: x.yaml:3: bad\nerror: x.yaml:9: worse\n"
