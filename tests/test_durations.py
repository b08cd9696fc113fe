"""Durations: every form the flags and values accept, one parser, the same errors everywhere."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import durations, errors


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("500ms", 0.5), ("90s", 90), ("5m", 300), ("1h30m", 5400), ("7d", 604800), (" 2h ", 7200), ("1.5h", 5400)],
)
def test_the_forms_users_write(text: str, seconds: float) -> None:
    assert durations.parse(text) == seconds


@pytest.mark.parametrize("text", ["", "5", "m5", "5 m", "5x", "1h 30m", "-5s"])
def test_anything_else_is_invalid_input_naming_where(text: str) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        durations.parse(text, where="--timeout")
    assert caught.value.where == "--timeout"


@given(h=st.integers(0, 99), m=st.integers(0, 59), s=st.integers(0, 59))
def test_composite_durations_add_up(h: int, m: int, s: int) -> None:
    assert durations.parse(f"{h}h{m}m{s}s") == h * 3600 + m * 60 + s
