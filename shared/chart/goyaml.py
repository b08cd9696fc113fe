"""Helm's ``toYaml``, byte for byte: sigs.k8s.io/yaml over go-yaml v2's encoder and emitter.

``toYaml`` in a Helm template marshals the value to JSON, reads the JSON back with go-yaml v2 and
writes it with go-yaml v2's emitter (a port of libyaml), then drops the final newline. The chart
prints the nvsentinel values into a ConfigMap with it, so the ConfigMap's text, and with it the
object, depends on every detail: keys in go-yaml's "natural" order (``a2`` before ``a10``), strings
quoted only when they would read back as another type (YAML 1.1 rules: ``"yes"``, ``"1"``,
``"2001-12-14"``), single quotes where a plain scalar cannot start with the character, double
quotes with escapes for control characters, literal blocks (``|-``) for multi-line text, and plain
and quoted scalars folded at 80 columns.

This module holds the JSON round trip and ``to_yaml``; the parts of go-yaml v2 that a JSON-shaped
value reaches are ported in the modules beside it: the resolver (``goyaml_resolve``: which strings
need quotes), the key order (``goyaml_keys``), scalar styles (``goyaml_scalars``) and the emitter
(``goyaml_emitter``: block mappings and sequences, ``[]``/``{}``, long keys). Anchors, tags, flow
collections with items and the canonical form are left out: that path never produces them.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from shared.chart import gofmt, goyaml_emitter

# The JSON round trip.
# json.Marshal leaves these raw; go-yaml's reader refuses them, so Helm's toYaml prints nothing.
_REFUSED = re.compile("[\x7f-\x84\x86-\x9f\ufffe\uffff]")
# A raw NEL (json.Marshal leaves it too) is a line break to go-yaml: folded like one in a quoted scalar.
_NEL_RUN = re.compile(" *\x85[ \x85]*")


def _reread(text: str) -> str:
    if _REFUSED.search(text):
        raise gofmt.UnsupportedValue("control characters are not allowed")
    if "\x85" not in text:
        return text
    return _NEL_RUN.sub(lambda m: " " if m.group().count("\x85") == 1 else "\n" * (m.group().count("\x85") - 1), text)


def _reread_key(key: str) -> str:
    # A key is a YAML simple key: one line, at most 1024 characters as JSON writes it.
    if "\x85" in key or len(gofmt.json_string(key)) > 1024:
        raise gofmt.UnsupportedValue("did not find expected ',' or '}'")
    return _reread(key)


def _json_shape(value: Any) -> Any:
    """The value as go-yaml reads back ``json.Marshal``'s output: numbers become int or float by their text."""
    if isinstance(value, dict):
        return {_reread_key(str(key)): _json_shape(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_shape(item) for item in value]
    if isinstance(value, float):
        return _resolve_number(gofmt.format_float_json(value))
    if isinstance(value, str):
        return _reread(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def _resolve_number(text: str) -> int | float:
    if re.fullmatch(r"-?[0-9]+", text) and -(2**63) <= int(text) < 2**64:
        return int(text)
    return float(text)


def to_yaml(value: Any) -> str:
    """Helm's ``toYaml``: the document go-yaml v2 writes for ``value``, without its last newline.

    An infinite or NaN float makes ``json.Marshal`` fail, and Helm's ``toYaml`` then prints nothing.
    """
    try:
        shaped = _json_shape(value)
    except gofmt.UnsupportedValue:
        return ""
    text = goyaml_emitter.document(shaped)
    return text[:-1] if text.endswith("\n") else text
