"""The protobuf wire format as gogo-protobuf's generated Unmarshal methods read it, with Go's errors.

Varints (``proto: integer overflow``), length-delimited chunks (``unexpected EOF``, ``proto:
negative length found during unmarshaling``), skipping unknown fields (groups included, as
``skipGenerated`` does), and the scalar types by their declared kind. Which field is which, and
how a message prints as JSON, is :mod:`shared.sim.apiserver.protobuf`.
"""

from __future__ import annotations

import struct
from typing import Any

_FIXED_FORMAT = {"fixed64": "<Q", "sfixed64": "<q", "double": "<d", "fixed32": "<I", "sfixed32": "<i", "float": "<f"}
# Wire type each scalar is written with: 0 varint, 1 eight bytes, 5 four bytes, 2 length-delimited.
WIRE = {
    **dict.fromkeys(("int32", "int64", "uint32", "uint64", "sint32", "sint64", "bool"), 0),
    **{kind: 1 if fmt[1] in "Qqd" else 5 for kind, fmt in _FIXED_FORMAT.items()},
    "string": 2,
    "bytes": 2,
}


class DecodeError(Exception):
    """The Go decoder's error text for a malformed message (``unexpected EOF``, ``proto: ...``)."""


def varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
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


def length(data: bytes, pos: int, end: int) -> tuple[int, int]:
    size, pos = varint(data, pos, end)
    if size >= 1 << 63:
        raise DecodeError("proto: negative length found during unmarshaling")
    if pos + size > end:
        raise DecodeError("unexpected EOF")
    return pos, pos + size


def skip(data: bytes, pos: int, end: int, wire: int) -> int:
    """Past one unknown field whose tag was just read (groups included, as gogo's skipGenerated)."""
    depth = 0
    while True:
        if wire == 0:
            _, pos = varint(data, pos, end)
        elif wire == 1:
            pos += 8
        elif wire == 2:
            _, pos = length(data, pos, end)
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
        key, pos = varint(data, pos, end)
        wire = key & 7


def signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def scalar(kind: str, data: bytes, pos: int, end: int) -> tuple[Any, int]:
    if kind in ("string", "bytes"):
        start, stop = length(data, pos, end)
        chunk = data[start:stop]
        return (chunk.decode("utf-8", "replace") if kind == "string" else chunk), stop
    if kind in _FIXED_FORMAT:
        size = struct.calcsize(_FIXED_FORMAT[kind])
        if pos + size > end:
            raise DecodeError("unexpected EOF")
        return struct.unpack_from(_FIXED_FORMAT[kind], data, pos)[0], pos + size
    value, pos = varint(data, pos, end)
    if kind == "bool":
        return value != 0, pos
    if kind == "sint32":
        value &= 0xFFFFFFFF
        return (value >> 1) ^ -(value & 1), pos
    if kind == "sint64":
        return (value >> 1) ^ -(value & 1), pos
    bits = 32 if kind.endswith("32") else 64
    return (signed(value, bits) if kind.startswith("int") else value & ((1 << bits) - 1)), pos
