"""Decode ``application/vnd.kubernetes.protobuf`` request bodies into the JSON-shaped objects the
emulator stores.

Typed clients write protobuf: every ``kubectl create <kind>``, ``kubectl auth can-i|whoami``,
``kubectl create token``, client-go leader election and event recorders, and helm's release Secrets.
A body is ``k8s\\0`` followed by a ``runtime.Unknown`` whose ``typeMeta`` names the kind and whose
``raw`` holds the typed message (apimachinery pkg/runtime/serializer/protobuf/protobuf.go). Field
numbers and names come from the table ``protogen`` derives from Kubernetes' ``generated.proto``.

The result is what Go's JSON encoder would print for the decoded Go struct, as closely as the wire
allows: gogo-protobuf writes non-pointer scalars always and pointers only when set, so a field that
is present with its zero value is dropped when the table marks it optional (omitempty) unless the
table marks its zero as meaningful (a set pointer such as ``replicas: 0``). Nested messages that are
present are kept even when empty (Go never omits a struct: ``status: {}``), except a zero
``metav1.Time``/``MicroTime``. Unknown fields are skipped: protobuf has no strict decoding
(apimachinery pkg/runtime/serializer/codec_factory.go). Responses stay JSON; this module only reads.
Quantities keep the text the client sent (Go would re-print them canonically).
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from shared.sim.apiserver import protoerrors
from shared.sim.apiserver.apierrors import ApiError
from shared.sim.apiserver.protowire import WIRE, DecodeError, length, scalar, signed, skip, varint

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
PREFIX = b"k8s\x00"
TABLE = "proto-1.34.json"

_META = "k8s.io.apimachinery.pkg.apis.meta.v1"
_TIME = f"{_META}.Time"
_MICROTIME = f"{_META}.MicroTime"
_DURATION = f"{_META}.Duration"
_FIELDS_V1 = f"{_META}.FieldsV1"
_QUANTITIES = ("k8s.io.apimachinery.pkg.api.resource.Quantity", "k8s.io.apimachinery.pkg.api.resource.QuantityValue")
_INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
_RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"
_UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"
# The scheme every built-in kind of kube-apiserver is registered in; its name appears in
# "no kind is registered" errors (kubernetes pkg/api/legacyscheme/scheme.go).
_SCHEME = "pkg/api/legacyscheme/scheme.go:30"
_QUANTITY_RE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)\Z")


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    label: str
    omit_empty: bool  # +optional / omitempty: a zero value is not printed
    keep_zero: bool  # ...unless it is a set pointer whose zero means something
    inline: bool  # json:",inline": the message's fields go into the parent


@dataclass(frozen=True)
class Table:
    messages: dict[str, dict[int, Field]]
    kinds: dict[str, dict[str, str]]
    meta_kinds: dict[str, str]
    nullable: frozenset[str]

    def message_for(self, api_version: str, kind: str) -> str | None:
        return self.meta_kinds.get(kind) or self.kinds.get(api_version, {}).get(kind)


@functools.cache
def table() -> Table:
    """The field table shipped as package data, loaded on first use."""
    raw = json.loads((resources.files("shared.sim.apiserver") / "data" / TABLE).read_text())
    messages = {
        name: {
            int(num): Field(n, t, label, "o" in flags, "z" in flags, "i" in flags)
            for num, (n, t, label, flags) in fields.items()
        }
        for name, fields in raw["messages"].items()
    }
    return Table(messages, raw["kinds"], raw["metaKinds"], frozenset(raw["nullable"]))


def _go_name(name: str) -> str:
    # Go names the field in its errors; the exported name is the JSON name capitalised (initialisms
    # such as UID are not reproduced).
    return name[:1].upper() + name[1:]


# ---------------------------------------------------------------- messages
def _read(message: str, data: bytes, start: int, end: int) -> dict[int, Any]:
    """Field number → raw value: scalars (last wins), lists, map dicts, or byte chunks of a message."""
    fields = table().messages[message]
    short = message.rsplit(".", 1)[-1]
    out: dict[int, Any] = {}
    pos = start
    while pos < end:
        key, pos = varint(data, pos, end)
        wire, number = key & 7, signed(key >> 3, 32)
        if wire == 4:
            raise DecodeError(f"proto: {short}: wiretype end group for non-group")
        if number <= 0:
            raise DecodeError(f"proto: {short}: illegal tag {number} (wire type {key})")
        f = fields.get(number)
        if f is None:
            pos = skip(data, pos, end, wire)
        else:
            pos = _read_field(f, number, wire, data, pos, end, out)
    return out


def _read_field(f: Field, number: int, wire: int, data: bytes, pos: int, end: int, out: dict[int, Any]) -> int:
    """One occurrence of a known field (its tag just read) into ``out``; where the next tag starts."""
    is_scalar = f.type in WIRE
    packable = f.label == "repeated" and is_scalar and WIRE[f.type] != 2
    if wire != (WIRE[f.type] if is_scalar and f.label != "map" else 2) and not (packable and wire == 2):
        raise DecodeError(f"proto: wrong wireType = {wire} for field {_go_name(f.name)}")
    if f.label == "map":
        s, pos = length(data, pos, end)
        k, v = _map_entry(f, data, s, pos)
        out.setdefault(number, {})[k] = v
    elif not is_scalar:
        s, pos = length(data, pos, end)
        out.setdefault(number, []).append(data[s:pos])
    elif packable and wire == 2:
        s, pos = length(data, pos, end)
        items = out.setdefault(number, [])
        while s < pos:
            value, s = scalar(f.type, data, s, pos)
            items.append(value)
    else:
        value, pos = scalar(f.type, data, pos, end)
        if f.label == "repeated":
            out.setdefault(number, []).append(value)
        else:
            out[number] = value
    return pos


def _map_entry(f: Field, data: bytes, pos: int, end: int) -> tuple[str, Any]:
    # gogo reads key (1) and value (2) by their declared types whatever the wire type says.
    key: str = ""
    value: Any = None
    while pos < end:
        tag, pos = varint(data, pos, end)
        if tag >> 3 == 1:
            key, pos = scalar("string", data, pos, end)
        elif tag >> 3 == 2 and f.type in WIRE:
            value, pos = scalar(f.type, data, pos, end)
        elif tag >> 3 == 2:
            s, pos = length(data, pos, end)
            value = data[s:pos]
        else:
            pos = skip(data, pos, end, tag & 7)
    if f.type in WIRE:
        return key, _json_scalar(f.type, value if value is not None else _zero(f.type))
    return key, _render_message(f.type, [value or b""])


def _zero(kind: str) -> Any:
    return {"string": "", "bytes": b"", "bool": False}.get(kind, 0.0 if kind in ("double", "float") else 0)


def _json_scalar(kind: str, value: Any) -> Any:
    return base64.b64encode(value).decode() if kind == "bytes" else value


def _render_message(message: str, chunks: list[bytes]) -> Any:
    """One message field as JSON; several occurrences of a singular field merge, as in Go."""
    data = chunks[-1] if len(chunks) == 1 or message in _REPLACED else b"".join(chunks)
    special = _SPECIAL.get(message)
    if special is not None:
        return special(_read(message, data, 0, len(data)), data)
    if message in table().nullable:
        return [_json_scalar("string", v) for v in _read(message, data, 0, len(data)).get(1, [])]
    return render(message, _read(message, data, 0, len(data)))


def render(message: str, values: dict[int, Any]) -> dict[str, Any]:
    """The JSON object for a read message, fields in declaration (Go struct) order."""
    out: dict[str, Any] = {}
    for number, f in table().messages[message].items():
        if number not in values:
            continue
        value = values[number]
        if f.label == "map":
            out[f.name] = value
        elif f.type in WIRE:
            _render_scalar(out, f, value)
        elif f.label == "repeated":
            out[f.name] = [_render_message(f.type, [chunk]) for chunk in value]
        else:
            rendered = _render_message(f.type, value)
            if f.inline and isinstance(rendered, dict):
                out.update(rendered)
            elif rendered is not None:
                out[f.name] = rendered
    return out


def _render_scalar(out: dict[str, Any], f: Field, value: Any) -> None:
    """A scalar field (or list of them), unless omitempty drops it."""
    if f.label == "repeated":
        if value:
            out[f.name] = [_json_scalar(f.type, v) for v in value]
    elif not (f.omit_empty and not f.keep_zero and value == _zero(f.type)):
        out[f.name] = _json_scalar(f.type, value)


# ---------------------------------------------------------------- hand-marshalled types
def _rfc3339(seconds: int, nanos: int, *, micro: bool) -> str:
    total = seconds * 1_000_000_000 + nanos
    try:
        moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(microseconds=total // 1000)
    except OverflowError:
        raise DecodeError("Time.MarshalJSON: year outside of range [0,9999]") from None
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{moment.microsecond:06d}Z" if micro else f"{text}Z"


def _time(values: dict[int, Any], data: bytes) -> str | None:
    # An empty message is the zero time, which Go prints as null: the field is left out. Go reads
    # whole seconds only (apimachinery pkg/apis/meta/v1/time_proto.go).
    return None if not data else _rfc3339(values.get(1, 0), 0, micro=False)


def _micro_time(values: dict[int, Any], data: bytes) -> str | None:
    return None if not data else _rfc3339(values.get(1, 0), values.get(2, 0), micro=True)


def go_duration(nanoseconds: int) -> str:
    """``time.Duration.String()``: ``1h0m0s``, ``30s``, ``1.5s``, ``250ms``, ``0s``."""
    if nanoseconds == 0:
        return "0s"
    sign, u = ("-" if nanoseconds < 0 else ""), abs(nanoseconds)

    def frac(value: int, prec: int) -> str:
        whole, rest = divmod(value, 10**prec)
        digits = f"{rest:0{prec}d}".rstrip("0") if prec else ""
        return f"{whole}.{digits}" if digits else str(whole)

    if u < 1_000_000_000:
        prec, unit = (0, "ns") if u < 1000 else (3, "µs") if u < 1_000_000 else (6, "ms")
        return f"{sign}{frac(u, prec)}{unit}"
    seconds, minutes = frac(u % 60_000_000_000, 9), u // 60_000_000_000
    text = f"{seconds}s"
    if minutes:
        text = f"{minutes % 60}m{text}"
        if minutes >= 60:
            text = f"{minutes // 60}h{text}"
    return sign + text


def _duration(values: dict[int, Any], _data: bytes) -> str:
    return go_duration(values.get(1, 0))


def _quantity(values: dict[int, Any], _data: bytes) -> str:
    text: str = values.get(1, "0") if 1 in values else "0"
    if not _QUANTITY_RE.match(text):
        raise DecodeError(f"quantities must match the regular expression '{_QUANTITY_RE.pattern}'")
    return text


def _int_or_string(values: dict[int, Any], _data: bytes) -> int | str:
    kind = values.get(1, 0)
    if kind == 0:
        return int(values.get(2, 0))
    if kind == 1:
        return str(values.get(3, ""))
    raise DecodeError("json: error calling MarshalJSON for type *intstr.IntOrString: impossible IntOrString.Type")


def _raw_json(values: dict[int, Any], _data: bytes) -> Any:
    # RawExtension and FieldsV1 carry the embedded JSON as bytes even inside protobuf.
    raw: bytes = values.get(1, b"")
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise DecodeError(f"json: error calling MarshalJSON: {exc}") from None


_SPECIAL: dict[str, Callable[[dict[int, Any], bytes], Any]] = {
    _TIME: _time,
    _MICROTIME: _micro_time,
    _DURATION: _duration,
    _INT_OR_STRING: _int_or_string,
    _RAW_EXTENSION: _raw_json,
    _FIELDS_V1: _raw_json,
    **dict.fromkeys(_QUANTITIES, _quantity),
}
# Hand-written Unmarshal methods replace the value instead of merging a repeated occurrence.
_REPLACED = frozenset({_TIME, _MICROTIME, *_QUANTITIES})


# ---------------------------------------------------------------- the envelope
def decode(raw: bytes, *, into: tuple[str, str] | None = None, custom: bool = False) -> dict[str, Any]:
    """The object a protobuf body carries, shaped as its JSON form with ``kind`` and ``apiVersion``.

    ``into`` is the ``(apiVersion, kind)`` the endpoint serves: as in the real server it fills a
    missing ``typeMeta`` and names the expected kind in errors. ``custom`` marks a custom resource
    endpoint, which refuses protobuf bodies. Raises ``ApiError``: 400 with the server's wording for
    a malformed body (apiserver pkg/endpoints/handlers/rest.go ``transformDecodeError``), 415 for a
    built-in kind the table does not describe.
    """
    target = into[1] if into else ""
    envelope, sent_version, sent_kind = _envelope(raw, target)
    api_version, kind = sent_version, sent_kind
    # schema.ParseGroupVersion: "v1", "apps/v1"; more than one slash leaves no version at all.
    version = api_version.rpartition("/")[2] if api_version.count("/") <= 1 else ""
    if into:
        # copyKindDefaults: the endpoint's kind and group/version fill what the body left empty.
        kind = kind or into[1]
        if not version:
            api_version, version = into[0], into[0].rpartition("/")[2]
    if not kind or not version:
        what = "Kind" if not kind else "apiVersion"
        quoted_version, quoted_kind = protoerrors.go_quote(sent_version), protoerrors.go_quote(sent_kind)
        go_value = f"runtime.TypeMeta{{APIVersion:{quoted_version}, Kind:{quoted_kind}}}"
        raise protoerrors.unrecognized(f"Object '{what}' is missing in '{go_value}'", raw, target)
    cannot = protoerrors.Cannot(kind, version, target or kind)
    if custom:
        # The CR handler lists a protobuf serializer, but it cannot type the unstructured object it
        # decodes into (apiextensions-apiserver pkg/apiserver/customresource_handler.go).
        raise cannot("Object 'Kind' is missing in 'object has no kind field '")
    message = _message(into, api_version, kind, cannot)
    try:
        payload: bytes = envelope.get(2, b"")
        body = render(message, _read(message, payload, 0, len(payload)))
    except DecodeError as exc:
        raise cannot(str(exc)) from None
    return {"kind": kind, "apiVersion": api_version, **body}


def _envelope(raw: bytes, target: str) -> tuple[dict[int, Any], str, str]:
    """The ``runtime.Unknown`` a body holds, and the apiVersion and kind its ``typeMeta`` names."""
    if raw == PREFIX:
        raise protoerrors.unrecognized("empty body", raw, target)
    if not raw.startswith(PREFIX):
        text = "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
        raise protoerrors.unrecognized(text if raw else "empty data", raw, target)
    try:
        envelope = _read(_UNKNOWN, raw, len(PREFIX), len(raw))
        type_meta = _read("k8s.io.apimachinery.pkg.runtime.TypeMeta", *_joined(envelope.get(1, [])))
    except DecodeError as exc:
        raise protoerrors.unrecognized(str(exc), raw, target) from None
    return envelope, type_meta.get(1, ""), type_meta.get(2, "")


def _message(into: tuple[str, str] | None, api_version: str, kind: str, cannot: protoerrors.Cannot) -> str:
    """The message a body's kind decodes as: 415 when the endpoint's kind has none, 400 when the body's
    kind is not registered or does not convert to the endpoint's."""
    tbl = table()
    if into and tbl.message_for(*into) is None:
        raise ApiError(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml",
        )
    message = tbl.message_for(api_version, kind)
    if message is None:
        raise cannot(
            f"no kind {protoerrors.go_quote(kind)} is registered for version {protoerrors.go_quote(api_version)} "
            f"in scheme {protoerrors.go_quote(_SCHEME)}"
        )
    if into and message != tbl.message_for(*into):
        wanted = tbl.message_for(*into) or ""
        raise cannot(
            f"converting ({protoerrors.go_type(message)}) to ({protoerrors.internal_type(wanted)}): unknown conversion"
        )
    return message


def _joined(chunks: list[bytes]) -> tuple[bytes, int, int]:
    data = b"".join(chunks)
    return data, 0, len(data)
