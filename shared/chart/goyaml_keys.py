"""go-yaml v2's key order, for :mod:`shared.chart.goyaml`: ``keyList.Less`` over string keys.

go-yaml v2 sorts a mapping's keys "naturally": letters by code point, a run of digits by its
number, so ``a2`` comes before ``a10``; a letter sorts after a non-letter. Numbers wrap at 64 bits
as Go's ``int`` does, and a run with a leading zero compares as go-yaml's loop does (``a01`` and
``a1``). Helm's ``toYaml`` of a values mapping depends on this order byte for byte.
"""

from __future__ import annotations

import functools
import unicodedata


def sorted_keys(keys: list[str]) -> list[str]:
    """Keys in the order go-yaml v2 writes them."""
    return sorted(keys, key=functools.cmp_to_key(_compare))


def _compare(a: str, b: str) -> int:
    return -1 if _key_less(a, b) else 1 if _key_less(b, a) else 0


def _is_letter(char: str) -> bool:
    return unicodedata.category(char).startswith("L")


def _is_digit(char: str) -> bool:
    return unicodedata.category(char) == "Nd"


def _wrap64(number: int) -> int:
    return (number + 2**63) % 2**64 - 2**63


def _key_less(a: str, b: str) -> bool:
    """go-yaml v2's ``keyList.Less`` for two string keys: letters by code, digit runs by number."""
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        a_letter, b_letter = _is_letter(a[i]), _is_letter(b[i])
        if a_letter and b_letter:
            return a[i] < b[i]
        if a_letter or b_letter:
            return b_letter
        return _digits_less(a, b, i)
    return len(a) < len(b)


def _digits_less(a: str, b: str, i: int) -> bool:
    """At the first difference ``i``, neither a letter: the digit runs from ``i`` by number, then by length."""
    seed = 0
    if a[i] == "0" or b[i] == "0":
        # go-yaml starts both numbers at 1 when a non-zero digit precedes the zeros before ``i``.
        j = i - 1
        while j >= 0 and _is_digit(a[j]):
            if a[j] != "0":
                seed = 1
                break
            j -= 1
    a_end, a_number = _digit_run(a, i, seed)
    b_end, b_number = _digit_run(b, i, seed)
    if a_number != b_number:
        return a_number < b_number
    if a_end != b_end:
        return a_end < b_end
    return a[i] < b[i]


def _digit_run(text: str, start: int, number: int) -> tuple[int, int]:
    """(end, number): where the run of digits from ``start`` ends, and ``number`` extended by it."""
    end = start
    while end < len(text) and _is_digit(text[end]):
        number = _wrap64(number * 10 + ord(text[end]) - ord("0"))
        end += 1
    return end, number
