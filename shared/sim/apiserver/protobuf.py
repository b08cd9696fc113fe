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
import struct
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from shared.sim.apiserver.apierrors import ApiError

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
_QUANTITY_RE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")

_FIXED_FORMAT = {"fixed64": "<Q", "sfixed64": "<q", "double": "<d", "fixed32": "<I", "sfixed32": "<i", "float": "<f"}
# Wire type each scalar is written with: 0 varint, 1 eight bytes, 5 four bytes, 2 length-delimited.
_WIRE = {
    **dict.fromkeys(("int32", "int64", "uint32", "uint64", "sint32", "sint64", "bool"), 0),
    **{kind: 1 if fmt[1] in "Qqd" else 5 for kind, fmt in _FIXED_FORMAT.items()},
    "string": 2,
    "bytes": 2,
}


class DecodeError(Exception):
    """The Go decoder's error text for a malformed message (``unexpected EOF``, ``proto: ...``)."""


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


# ---------------------------------------------------------------- wire reading
def _varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if shift >= 64:
            raise DecodeError("proto: integer overflow")
        if pos >= end:
            raise DecodeError("unexpected EOF")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7


def _length(data: bytes, pos: int, end: int) -> tuple[int, int]:
    size, pos = _varint(data, pos, end)
    if size >= 1 << 63:
        raise DecodeError("proto: negative length found during unmarshaling")
    if pos + size > end:
        raise DecodeError("unexpected EOF")
    return pos, pos + size


def _skip(data: bytes, pos: int, end: int, wire: int) -> int:
    """Past one unknown field whose tag was just read (groups included, as gogo's skipGenerated)."""
    depth = 0
    while True:
        if wire == 0:
            _, pos = _varint(data, pos, end)
        elif wire == 1:
            pos += 8
        elif wire == 2:
            _, pos = _length(data, pos, end)
        elif wire == 3:
            depth += 1
        elif wire == 4:
            depth -= 1
        elif wire == 5:
            pos += 4
        else:
            raise DecodeError(f"proto: illegal wireType {wire}")
        if pos > end:
            raise DecodeError("unexpected EOF")
        if depth <= 0:
            return pos
        key, pos = _varint(data, pos, end)
        wire = key & 7


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _scalar(kind: str, data: bytes, pos: int, end: int) -> tuple[Any, int]:
    if kind in ("string", "bytes"):
        start, stop = _length(data, pos, end)
        chunk = data[start:stop]
        return (chunk.decode("utf-8", "replace") if kind == "string" else chunk), stop
    if kind in _FIXED_FORMAT:
        size = struct.calcsize(_FIXED_FORMAT[kind])
        if pos + size > end:
            raise DecodeError("unexpected EOF")
        return struct.unpack_from(_FIXED_FORMAT[kind], data, pos)[0], pos + size
    value, pos = _varint(data, pos, end)
    if kind == "bool":
        return value != 0, pos
    if kind == "sint32":
        value &= 0xFFFFFFFF
        return (value >> 1) ^ -(value & 1), pos
    if kind == "sint64":
        return (value >> 1) ^ -(value & 1), pos
    bits = 32 if kind.endswith("32") else 64
    return (_signed(value, bits) if kind.startswith("int") else value & ((1 << bits) - 1)), pos


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
        key, pos = _varint(data, pos, end)
        wire, number = key & 7, _signed(key >> 3, 32)
        if wire == 4:
            raise DecodeError(f"proto: {short}: wiretype end group for non-group")
        if number <= 0:
            raise DecodeError(f"proto: {short}: illegal tag {number} (wire type {key})")
        f = fields.get(number)
        if f is None:
            pos = _skip(data, pos, end, wire)
            continue
        scalar = f.type in _WIRE
        packable = f.label == "repeated" and scalar and _WIRE[f.type] != 2
        if wire != (_WIRE[f.type] if scalar and f.label != "map" else 2) and not (packable and wire == 2):
            raise DecodeError(f"proto: wrong wireType = {wire} for field {_go_name(f.name)}")
        if f.label == "map":
            s, pos = _length(data, pos, end)
            k, v = _map_entry(f, data, s, pos)
            out.setdefault(number, {})[k] = v
        elif not scalar:
            s, pos = _length(data, pos, end)
            out.setdefault(number, []).append(data[s:pos])
        elif packable and wire == 2:
            s, stop = _length(data, pos, end)
            items = out.setdefault(number, [])
            while s < stop:
                value, s = _scalar(f.type, data, s, stop)
                items.append(value)
            pos = stop
        else:
            value, pos = _scalar(f.type, data, pos, end)
            if f.label == "repeated":
                out.setdefault(number, []).append(value)
            else:
                out[number] = value
    return out


def _map_entry(f: Field, data: bytes, pos: int, end: int) -> tuple[str, Any]:
    # gogo reads key (1) and value (2) by their declared types whatever the wire type says.
    key: str = ""
    value: Any = None
    while pos < end:
        tag, pos = _varint(data, pos, end)
        if tag >> 3 == 1:
            key, pos = _scalar("string", data, pos, end)
        elif tag >> 3 == 2 and f.type in _WIRE:
            value, pos = _scalar(f.type, data, pos, end)
        elif tag >> 3 == 2:
            s, pos = _length(data, pos, end)
            value = data[s:pos]
        else:
            pos = _skip(data, pos, end, tag & 7)
    if f.type in _WIRE:
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
        elif f.type in _WIRE:
            if f.label == "repeated":
                if value:
                    out[f.name] = [_json_scalar(f.type, v) for v in value]
            elif not (f.omit_empty and not f.keep_zero and value == _zero(f.type)):
                out[f.name] = _json_scalar(f.type, value)
        elif f.label == "repeated":
            out[f.name] = [_render_message(f.type, [chunk]) for chunk in value]
        else:
            rendered = _render_message(f.type, value)
            if f.inline and isinstance(rendered, dict):
                out.update(rendered)
            elif rendered is not None:
                out[f.name] = rendered
    return out


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
def _summary(raw: bytes) -> str:
    # apiserver pkg/endpoints/handlers/rest.go summarizeData(body, 30)
    if not raw:
        return "<empty>"
    if raw[:1] == b"{":
        return raw[:30].decode("utf-8", "replace") + (" ..." if len(raw) > 30 else "")
    return raw[:30].hex() + (" ..." if len(raw) > 30 else "")


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def decode(raw: bytes, *, into: tuple[str, str] | None = None, custom: bool = False) -> dict[str, Any]:
    """The object a protobuf body carries, shaped as its JSON form with ``kind`` and ``apiVersion``.

    ``into`` is the ``(apiVersion, kind)`` the endpoint serves: as in the real server it fills a
    missing ``typeMeta`` and names the expected kind in errors. ``custom`` marks a custom resource
    endpoint, which refuses protobuf bodies. Raises ``ApiError``: 400 with the server's wording for
    a malformed body (apiserver pkg/endpoints/handlers/rest.go ``transformDecodeError``), 415 for a
    built-in kind the table does not describe.
    """
    target = into[1] if into else ""
    if not raw.startswith(PREFIX) or raw == PREFIX:
        if raw == PREFIX:
            raise _unrecognized("empty body", raw, target)
        raise _unrecognized(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
            if raw
            else "empty data",
            raw,
            target,
        )
    try:
        envelope = _read(_UNKNOWN, raw, len(PREFIX), len(raw))
        type_meta = _read("k8s.io.apimachinery.pkg.runtime.TypeMeta", *_joined(envelope.get(1, [])))
    except DecodeError as exc:
        raise _unrecognized(str(exc), raw, target) from None
    sent_version, sent_kind = type_meta.get(1, ""), type_meta.get(2, "")
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
        go_value = f"runtime.TypeMeta{{APIVersion:{_go_quote(sent_version)}, Kind:{_go_quote(sent_kind)}}}"
        raise _unrecognized(f"Object '{what}' is missing in '{go_value}'", raw, target)
    target = target or kind

    def cannot(text: str) -> ApiError:
        return ApiError(
            400, "BadRequest", f"{kind} in version {_go_quote(version)} cannot be handled as a {target}: {text}"
        )

    if custom:
        # The CR handler lists a protobuf serializer, but it cannot type the unstructured object it
        # decodes into (apiextensions-apiserver pkg/apiserver/customresource_handler.go).
        raise cannot("Object 'Kind' is missing in 'object has no kind field '")
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
            f"no kind {_go_quote(kind)} is registered for version {_go_quote(api_version)} "
            f"in scheme {_go_quote(_SCHEME)}"
        )
    if into and message != tbl.message_for(*into):
        wanted = tbl.message_for(*into) or ""
        raise cannot(f"converting ({_go_type(message)}) to ({_internal_type(wanted)}): unknown conversion")
    try:
        payload: bytes = envelope.get(2, b"")
        body = render(message, _read(message, payload, 0, len(payload)))
    except DecodeError as exc:
        raise cannot(str(exc)) from None
    return {"kind": kind, "apiVersion": api_version, **body}


def _joined(chunks: list[bytes]) -> tuple[bytes, int, int]:
    data = b"".join(chunks)
    return data, 0, len(data)


def _go_type(message: str) -> str:
    parts = message.split(".")
    return f"{parts[-2]}.{parts[-1]}"


def _internal_type(message: str) -> str:
    # The hub (internal) types live in packages named after the group (core, apps, rbac, ...).
    parts = message.split(".")
    return f"{parts[-3] if parts[2] == 'api' else parts[-2]}.{parts[-1]}"


def _unrecognized(text: str, raw: bytes, target: str) -> ApiError:
    if not target:
        return ApiError(400, "BadRequest", text)
    return ApiError(
        400,
        "BadRequest",
        f"the object provided is unrecognized (must be of type {target}): {text} ({_summary(raw)})",
    )
