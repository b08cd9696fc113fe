"""Build the protobuf field table the API server emulator decodes request bodies with.

Typed clients (every ``kubectl create <kind>``, ``kubectl auth``, helm's release Secrets) write
``application/vnd.kubernetes.protobuf``. Decoding that needs each message's field numbers, names and
types, which live in Kubernetes' ``generated.proto`` files. This script reads those files (proto2:
packages, imports, messages, ``optional``/``repeated`` fields, ``map<string, X>``) and writes a compact
JSON table into the package, so the emulator carries derived facts and no upstream file::

    .venv/bin/python -m shared.sim.apiserver.protogen /path/to/k8s-proto [--out FILE]

Everything comes from the ``.proto`` text except five small lists, each saying where its facts come
from (:mod:`shared.sim.apiserver.protofacts`): API group names and the request options every group
version accepts (neither is in the files), fields the Go types embed with ``json:",inline"``, fields
whose explicit zero must survive (set pointers), and fields whose comment lacks ``+optional``
although Go omits their empty value.
Comments, options and validation markers are dropped; a field keeps only whether its comment says
``+optional``. Object kinds are the messages whose ``metadata`` is ObjectMeta or ListMeta.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared.sim.apiserver.protofacts import GROUPS, INLINE, KEEP_ZERO, META, META_KINDS, OMIT_EMPTY

SOURCE_TAG = "v0.34.10"
SOURCE_REPOSITORIES = ("github.com/kubernetes/api", "github.com/kubernetes/apimachinery")
GENERATOR = "shared/sim/apiserver/protogen.py"
TABLE_NAME = "proto-1.34.json"

SCALARS = frozenset(
    {
        "double",
        "float",
        "int32",
        "int64",
        "uint32",
        "uint64",
        "sint32",
        "sint64",
        "fixed32",
        "fixed64",
        "sfixed32",
        "sfixed64",
        "bool",
        "string",
        "bytes",
    }
)

_FIELD = re.compile(
    r"^(optional|repeated|required)\s+([.\w]+)\s+(\w+)\s*=\s*(\d+)\s*(\[[^\]]*\])?\s*;$"
    r"|^map\s*<\s*(\w+)\s*,\s*([.\w]+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;$"
)


class ProtoError(ValueError):
    """A construct this reader does not take (the k8s files never use it)."""


@dataclass
class Field:
    name: str
    number: int
    label: str  # optional | repeated | required | map
    type: str  # scalar name or fully qualified message name, without a leading dot
    optional_marker: bool
    map_key: str = ""


@dataclass
class Message:
    full_name: str
    fields: list[Field] = field(default_factory=list)
    nullable: bool = False  # +protobuf.nullable=true: a named slice type, its JSON is the bare list


@dataclass
class ProtoFile:
    package: str
    imports: list[str]
    messages: list[Message]


def _strip_block_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def parse_file(text: str) -> ProtoFile:
    """One generated.proto: its package, imports and top-level messages with their fields.

    Field types stay as written (resolved later against the package and the imports). Raises
    ``ProtoError`` on nested messages, enums, oneofs or anything else k8s files do not contain.
    """
    parser = _Parser()
    for number, raw in enumerate(_strip_block_comments(text).splitlines(), 1):
        parser.line(number, raw.strip())
    if parser.current is not None:
        raise ProtoError(f"message {parser.current.full_name} is not closed")
    return ProtoFile(parser.package, parser.imports, parser.messages)


class _Parser:
    """The line-by-line state of ``parse_file``: the comment above the line, the open message."""

    def __init__(self) -> None:
        self.package = ""
        self.imports: list[str] = []
        self.messages: list[Message] = []
        self.comment: list[str] = []
        self.current: Message | None = None

    def line(self, number: int, line: str) -> None:
        if line.startswith("//"):
            self.comment.append(line[2:].strip())
            return
        if not line:
            pass
        elif self.current is None:
            self.top_level(number, line)
        elif line == "}":
            self.messages.append(self.current)
            self.current = None
        else:
            self.field(number, line, self.current)
        self.comment = []

    def top_level(self, number: int, line: str) -> None:
        if line.startswith("syntax"):
            if '"proto2"' not in line:
                raise ProtoError(f"line {number}: only proto2 is read: {line}")
        elif line.startswith("package "):
            self.package = line[len("package ") :].rstrip(";").strip()
        elif line.startswith("import "):
            self.imports.append(line.split('"')[1])
        elif line.startswith("option "):
            pass
        elif m := re.match(r"^message\s+(\w+)\s*\{\s*(\})?$", line):
            nullable = any(c.startswith("+protobuf.nullable=true") for c in self.comment)
            self.current = Message(f"{self.package}.{m.group(1)}", nullable=nullable)
            if m.group(2):
                self.messages.append(self.current)
                self.current = None
        else:
            raise ProtoError(f"line {number}: unexpected statement: {line}")

    def field(self, number: int, line: str, message: Message) -> None:
        m = _FIELD.match(line)
        if m is None:
            raise ProtoError(f"line {number}: unexpected field syntax: {line}")
        optional_marker = any(c == "+optional" or c.startswith("+optional ") for c in self.comment)
        if m.group(1):
            message.fields.append(Field(m.group(3), int(m.group(4)), m.group(1), m.group(2), optional_marker))
        else:
            message.fields.append(
                Field(m.group(8), int(m.group(9)), "map", m.group(7), optional_marker, map_key=m.group(6))
            )


def _resolve(type_name: str, package: str, known: set[str]) -> str:
    if type_name in SCALARS:
        return type_name
    if type_name.startswith("."):
        full = type_name[1:]
    else:
        # proto2 scoping: innermost package first, then each enclosing one.
        parts = package.split(".")
        full = ""
        for cut in range(len(parts), -1, -1):
            candidate = ".".join([*parts[:cut], type_name])
            if candidate in known:
                full = candidate
                break
    if full not in known:
        raise ProtoError(f"unknown type {type_name} in package {package}")
    return full


def load(root: Path) -> dict[str, Message]:
    """All messages of every generated.proto under ``root``, types resolved to full names.

    Raises ``ProtoError`` if an import does not resolve within ``root`` or a type is unknown.
    """
    files = {p.relative_to(root).as_posix(): parse_file(p.read_text()) for p in sorted(root.rglob("*.proto"))}
    if not files:
        raise ProtoError(f"no .proto files under {root}")
    for name, parsed in files.items():
        for imported in parsed.imports:
            if imported not in files:
                raise ProtoError(f"{name} imports {imported}, which is not under {root}")
    messages = {m.full_name: m for parsed in files.values() for m in parsed.messages}
    known = set(messages)
    for parsed in files.values():
        for message in parsed.messages:
            for f in message.fields:
                f.type = _resolve(f.type, parsed.package, known)
                if f.label == "map" and f.map_key != "string":
                    raise ProtoError(f"{message.full_name}.{f.name}: only string map keys are read")
    return messages


def _flags(message: str, f: Field) -> str:
    key = f"{message}.{f.name}"
    flags = ""
    if f.optional_marker or key in OMIT_EMPTY:
        flags += "o"
    if key in KEEP_ZERO:
        flags += "z"
    if key in INLINE:
        flags += "i"
    return flags


def _kinds(messages: dict[str, Message]) -> dict[str, dict[str, str]]:
    """apiVersion → kind → message: every API message whose ``metadata`` is ObjectMeta or ListMeta,
    except those other messages hold as a single field (PodTemplateSpec, JobTemplateSpec): an object
    kind is only ever a list's item."""
    out: dict[str, dict[str, str]] = {}
    embedded = {f.type for m in messages.values() for f in m.fields if f.label != "repeated"}
    for full, message in sorted(messages.items()):
        parts = full.split(".")
        if parts[:3] != ["k8s", "io", "api"]:
            continue
        if parts[3] not in GROUPS:
            raise ProtoError(f"package k8s.io.api.{parts[3]} has no API group in GROUPS")
        metadata = next((f for f in message.fields if f.name == "metadata"), None)
        if metadata is None or metadata.type not in (f"{META}.ObjectMeta", f"{META}.ListMeta") or full in embedded:
            continue
        group, version = GROUPS[parts[3]], parts[4]
        out.setdefault(f"{group}/{version}" if group else version, {})[parts[5]] = full
    return out


def build_table(root: Path) -> dict[str, Any]:
    """The table as written to the package (see ``shared.sim.apiserver.protobuf`` for its use)."""
    messages = load(root)
    for key in INLINE | KEEP_ZERO | OMIT_EMPTY:
        owner, _, name = key.rpartition(".")
        if owner not in messages or all(f.name != name for f in messages[owner].fields):
            raise ProtoError(f"{key} is listed in {GENERATOR} but not declared in the .proto files")
    missing = [k for k in META_KINDS if f"{META}.{k}" not in messages]
    if missing:
        raise ProtoError(f"meta kinds missing from the .proto files: {missing}")
    return {
        "comment": (
            f"Derived by {GENERATOR} from the generated.proto files of kubernetes/api and "
            f"kubernetes/apimachinery at tag {SOURCE_TAG} (Kubernetes 1.34). Do not edit; regenerate. "
            "fields: number -> [json name, type, label, flags]; flags: o = +optional or omitempty "
            "(empty value dropped), z = zero kept even so (a set pointer), i = inlined into the parent in JSON."
        ),
        "source": {"tag": SOURCE_TAG, "repositories": list(SOURCE_REPOSITORIES)},
        "generator": GENERATOR,
        "kinds": _kinds(messages),
        "metaKinds": {k: f"{META}.{k}" for k in META_KINDS},
        "nullable": sorted(name for name, m in messages.items() if m.nullable),
        "messages": {
            name: {str(f.number): [f.name, f.type, f.label, _flags(name, f)] for f in m.fields}
            for name, m in sorted(messages.items())
        },
    }


def render(table: dict[str, Any]) -> str:
    """The file text: one message per line, so a regenerated table diffs readably."""
    head = {k: v for k, v in table.items() if k != "messages"}
    lines = [json.dumps(head, separators=(",", ":"))[:-1] + ',"messages":{']
    entries = [
        f"{json.dumps(name)}:{json.dumps(fields, separators=(',', ':'))}" for name, fields in table["messages"].items()
    ]
    lines.append(",\n".join(entries))
    lines.append("}}")
    return "\n".join(lines) + "\n"


def default_output() -> Path:
    return Path(__file__).parent / "data" / TABLE_NAME


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="folder holding k8s.io/**/generated.proto")
    parser.add_argument("--out", type=Path, default=default_output(), help="table to write")
    args = parser.parse_args(argv)
    try:
        text = render(build_table(args.root))
    except (ProtoError, OSError) as exc:
        print(f"protogen: {exc}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
