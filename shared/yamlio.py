"""The only module that imports ruamel.yaml.

Reading gives plain Python data (dicts, lists, scalars) and turns every parse error into one
``InvalidInput`` naming the file and line. Writing dumps data, never formats strings, so a value
holding quotes, newlines, ``{{ }}``, ``$()`` or ``---`` comes out as an inert quoted or block
scalar. User files that are edited in place use the round-trip pair, which keeps comments.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shared import errors

_SPECIAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")
_INDENT_MAPPING = 2
_INDENT_SEQUENCE = 4
_INDENT_OFFSET = 2


def _safe_loader() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.allow_duplicate_keys = False
    # A plain "=" resolves to YAML 1.1's value tag, which the safe constructor refuses; every other
    # YAML reader (go-yaml in helm and kubectl) reads it as the string "=".
    yaml.constructor.add_constructor("tag:yaml.org,2002:value", lambda c, n: c.construct_scalar(n))
    return yaml


def _where(source: str, exc: Exception) -> str:
    # The context mark (where the broken construct began) is nearer the typo than the problem
    # mark, which for an unclosed bracket points past the last line.
    mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
    if mark is not None:
        return f"{source}:{mark.line + 1}"
    return source


def _problem(exc: Exception) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    text = " ".join(p for p in (context, problem) if p) or str(exc).splitlines()[0]
    return f"invalid YAML: {text}"


def loads(text: str, *, source: str = "<input>") -> Any:
    """Parse one YAML (or JSON) document into plain data; errors name ``source:line``."""
    from ruamel.yaml.error import YAMLError

    try:
        return _safe_loader().load(text)
    except YAMLError as exc:
        raise errors.InvalidInput(_problem(exc), where=_where(source, exc)) from exc


def loads_all(text: str, *, source: str = "<input>") -> list[Any]:
    """Parse every document of a multi-document stream; empty documents are dropped."""
    from ruamel.yaml.error import YAMLError

    try:
        return [doc for doc in _safe_loader().load_all(text) if doc is not None]
    except YAMLError as exc:
        raise errors.InvalidInput(_problem(exc), where=_where(source, exc)) from exc


def read_text(path: Path) -> str:
    """Read a user file as UTF-8; a missing or unreadable file is invalid input naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise errors.InvalidInput("file does not exist", where=str(path)) from exc
    except IsADirectoryError as exc:
        raise errors.InvalidInput("is a directory, expected a file", where=str(path)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise errors.InvalidInput(f"cannot read file: {exc}", where=str(path)) from exc


def load_file(path: Path) -> Any:
    """Parse a YAML or JSON file into plain data."""
    return loads(read_text(path), source=str(path))


def _prepare(data: Any) -> Any:
    """Multi-line strings become literal blocks; everything else is dumped as is."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

    if isinstance(data, dict):
        return {_prepare(key): _prepare(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_prepare(item) for item in data]
    if isinstance(data, str):
        if _SPECIAL.search(data):
            # YAML folds these (NEL, CR, line/paragraph separators, control characters) unless
            # escaped, and only a double-quoted scalar escapes them.
            return DoubleQuotedScalarString(data)
        if "\n" in data and not _has_unsafe_whitespace(data):
            return LiteralScalarString(data)
    return data


def _has_unsafe_whitespace(text: str) -> bool:
    # A literal block cannot carry trailing spaces on a line or a leading space on the
    # first line faithfully; such strings stay double-quoted so they round-trip exactly.
    lines = text.split("\n")
    return any(line != line.rstrip(" \t") for line in lines) or text.startswith((" ", "\t"))


def _dumper(indent: tuple[int, int, int]) -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.default_flow_style = False
    yaml.width = 1 << 30
    yaml.indent(mapping=indent[0], sequence=indent[1], offset=indent[2])
    yaml.representer.ignore_aliases = lambda _data: True
    yaml.explicit_start = False
    return yaml


def dumps(data: Any, *, indent: tuple[int, int, int] | None = None) -> str:
    """Dump plain data as block-style YAML with keys in their given order."""
    stream = io.StringIO()
    _dumper(indent or (_INDENT_MAPPING, _INDENT_SEQUENCE, _INDENT_OFFSET)).dump(_prepare(data), stream)
    return stream.getvalue()


def dumps_all(documents: list[Any]) -> str:
    """Dump several documents separated by ``---``."""
    dumper = _dumper((_INDENT_MAPPING, _INDENT_SEQUENCE, _INDENT_OFFSET))
    stream = io.StringIO()
    dumper.explicit_start = True
    dumper.dump_all([_prepare(doc) for doc in documents], stream)
    return stream.getvalue()


def load_roundtrip(text: str, *, source: str = "<input>") -> Any:
    """Parse keeping comments and key order, for files edited and written back."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return YAML(typ="rt").load(text)
    except YAMLError as exc:
        raise errors.InvalidInput(_problem(exc), where=_where(source, exc)) from exc


def dumps_roundtrip(data: Any) -> str:
    """Write back a document read with ``load_roundtrip``; comments survive."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 1 << 30
    stream = io.StringIO()
    yaml.dump(data, stream)
    return stream.getvalue()


def iter_scalars(data: Any) -> Iterator[Any]:
    """Every leaf value, for tests that look for unsafe content."""
    if isinstance(data, dict):
        for value in data.values():
            yield from iter_scalars(value)
    elif isinstance(data, list):
        for item in data:
            yield from iter_scalars(item)
    else:
        yield data


def line_of(text: str, path: str) -> int | None:
    """1-based line of the key at a dotted path (``components[3].helm.foo``), or None.

    Parses again with the round-trip loader, which keeps positions; only used on the error path,
    so the normal load stays fast.
    """
    import re

    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        node = YAML(typ="rt").load(text)
    except YAMLError:
        return None
    parts: list[str | int] = []
    for piece in path.split("."):
        match = re.match(r"^([^\[]*)((?:\[\d+\])*)$", piece)
        if not match:
            return None
        if match.group(1):
            parts.append(match.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", match.group(2)))
    line: int | None = None
    for part in parts:
        try:
            if isinstance(part, int):
                line = node.lc.item(part)[0] + 1
            else:
                line = node.lc.key(part)[0] + 1
            node = node[part]
        except (AttributeError, KeyError, IndexError, TypeError):
            return line
    return line
