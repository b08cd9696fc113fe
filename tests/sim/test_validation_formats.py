"""The string formats of built-in validation, against upstream's own test vectors.

Covers: DNS-1123 labels and subdomains, DNS-1035 labels, qualified names (label keys) and label
values with the vectors of apimachinery:pkg/util/validation/validation_test.go; the exact refusal
sentences (RegexError's double space); generateName's trailing-dash masking; ConfigMap keys
(property: accepted exactly when the regex matches and it is not ``.``/``..``/``..x``); port names;
Go's JSON syntax errors for Secret payloads (property: every JSON object is accepted).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.sim.apiserver.validation import formats, gojson

LABELS_OK = ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a", "1--a--b--2", "a" * 63]
LABELS_BAD = [
    "",
    "A",
    "ABC",
    "aBc",
    "A1",
    "A-1",
    "1-A",
    "-",
    "a-",
    "-a",
    "1-",
    "-1",
    "_",
    "a_",
    "_a",
    "a_b",
    " ",
    "a b",
    "a" * 64,
]
QNAMES_OK = [
    "simple",
    "now-with-dashes",
    "1-starts-with-num",
    "1234",
    "simple/simple",
    "now-with-dashes/simple",
    "now.with.dots/simple",
    "1-num.2-num/3-num",
    "1.2.3.4/5678",
    "Uppercase_Is_OK_123",
    "example.com/Uppercase_Is_OK_123",
    "a" * 63,
    "a" * 253 + "/" + "a" * 63,
]
QNAMES_BAD = [
    "nospecialchars%^=@",
    "cantendwithadash-",
    "-cantstartwithadash-",
    "only/one/slash",
    "Example.com/abc",
    "example_com/abc",
    "example.com/",
    "/simple",
    "a" * 64,
    "a" * 254 + "/abc",
]


@pytest.mark.parametrize("value", LABELS_OK)
def test_upstream_good_dns_labels_are_accepted(value: str) -> None:
    assert formats.dns1123_label(value) == []
    assert formats.dns1123_subdomain(value) == []


@pytest.mark.parametrize("value", LABELS_BAD)
def test_upstream_bad_dns_labels_are_refused(value: str) -> None:
    assert formats.dns1123_label(value)


@pytest.mark.parametrize("value", QNAMES_OK)
def test_upstream_good_qualified_names_are_accepted(value: str) -> None:
    assert formats.qualified_name(value) == []


@pytest.mark.parametrize("value", QNAMES_BAD)
def test_upstream_bad_qualified_names_are_refused(value: str) -> None:
    assert formats.qualified_name(value)


@pytest.mark.parametrize(
    ("check", "value", "expected"),
    [
        (
            formats.dns1123_label,
            "A",
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
                "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ],
        ),
        (formats.dns1123_label, "a.b", ["must not contain dots"]),
        (formats.dns1123_label, "a" * 64, ["must be no more than 63 characters"]),
        (
            formats.qualified_name,
            "a/b/c",
            [
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
                "and '/' (e.g. 'example.com/MyName')"
            ],
        ),
        (formats.qualified_name, "/x", ["prefix part must be non-empty"]),
        (
            formats.port_name,
            "-Http--",
            [
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "must not contain consecutive hyphens",
                "must not begin or end with a hyphen",
            ],
        ),
        (
            formats.percent,
            "5",
            [
                "a valid percent string must be a numeric string followed by an ending '%' "
                "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
            ],
        ),
        (formats.config_map_key, "..x", ["must not start with '..'"]),
    ],
)
def test_refusals_read_word_for_word_like_upstream(
    check: Callable[[str], list[str]], value: str, expected: list[str]
) -> None:
    assert check(value) == expected


def test_generate_name_may_end_with_a_dash_but_not_be_uppercase() -> None:
    # apimachinery:pkg/api/validation/generic.go maskTrailingDash
    assert formats.name_is_dns_subdomain("web-", True) == []
    assert formats.name_is_dns_subdomain("web-", False)
    assert formats.name_is_dns_label("Web-", True)


def test_rbac_names_are_path_segments() -> None:
    assert formats.path_segment_name("system:controller:foo", False) == []
    assert formats.path_segment_name("..", False) == ["may not be '..'"]
    assert formats.path_segment_name("a/b%c", False) == ["may not contain '/'", "may not contain '%'"]


@given(st.text(alphabet="abcXYZ09-_./ %", max_size=12))
def test_a_config_key_is_accepted_exactly_when_upstream_would(key: str) -> None:
    expected = bool(re.fullmatch(r"[-._a-zA-Z0-9]+", key)) and key not in (".", "..") and not key.startswith("..")
    assert (formats.config_map_key(key) == []) is expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"not json", "invalid character 'o' in literal null (expecting 'u')"),
        (b"", "unexpected end of JSON input"),
        (b"x", "invalid character 'x' looking for beginning of value"),
        (b'{"a" 1}', "invalid character '1' after object key"),
        (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
        (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
        (b"{} x", "invalid character 'x' after top-level value"),
        (b"1.", "unexpected end of JSON input"),
        (b"[]", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        (b'"s"', "json: cannot unmarshal string into Go value of type map[string]interface {}"),
        (b"null", None),
        (b'{"auths": {}}', None),
    ],
)
def test_secret_json_is_judged_with_gos_words(raw: bytes, expected: str | None) -> None:
    assert gojson.unmarshal_map_error(raw) == expected


@given(
    st.dictionaries(
        st.text(max_size=5),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=5),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
            max_leaves=6,
        ),
        max_size=4,
    )
)
def test_every_json_object_is_accepted(value: dict[str, object]) -> None:
    assert gojson.unmarshal_map_error(json.dumps(value, indent=1).encode()) is None
