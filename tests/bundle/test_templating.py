"""The quoting filters every template value goes through.

Covers: ``json`` and ``yaml`` giving YAML that parses back to the same value for hostile strings;
empty collections inline; ``sh`` giving one shell word; ``md`` keeping a table row on one line.
"""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from shared import yamlio
from shared.bundle import _templating

HOSTILE = [
    'it\'s "quoted"',
    "line1\nline2\n",
    "{{ .Values.x }}",
    "${HOME}",
    "$(touch /tmp/pwned)",
    "---",
    "&anchor",
    "*alias",
    "key: value",
    "- item",
    "#comment",
    "  padded  ",
    "tab\there",
    "ünïcode ✓",
    "`cmd`",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_json_and_yaml_filters_round_trip_hostile_strings(value: str) -> None:
    assert yamlio.loads(f"key: {_templating.to_json(value)}\n") == {"key": value}
    nested: dict[str, Any] = {"a": {"b": [value, {"c": value}]}, value: 1}
    assert yamlio.loads("values:" + _templating.to_yaml_block(nested, 4) + "\nafter: 1\n") == {
        "values": nested,
        "after": 1,
    }


@pytest.mark.parametrize(("value", "expected"), [({}, " {}"), ([], " []"), (3, " 3"), ("x", ' "x"')])
def test_empty_collections_and_scalars_stay_on_the_key_line(value: Any, expected: str) -> None:
    assert _templating.to_yaml_block(value, 2) == expected


@pytest.mark.parametrize("value", HOSTILE)
def test_sh_filter_gives_one_shell_word(value: str) -> None:
    assert shlex.split(_templating.to_shell(value)) == [value]


def test_md_filter_keeps_a_cell_on_one_line_without_pipes() -> None:
    assert _templating.to_markdown("a|b\nc") == "a\\|b c"
