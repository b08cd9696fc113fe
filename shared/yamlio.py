"""The only module that imports ruamel.yaml.

Reading gives plain Python data (dicts, lists, scalars) and turns every parse error into one
``InvalidInput`` naming the file and line. Files are read through ``shared.files`` (size, UTF-8,
NUL, directory and permission checks). A document is also refused, before any of it is built, when
its aliases expand it as Kubernetes' YAML decoder would refuse (go-yaml's ``allowedAliasRatio``,
counted by ``AliasBudget``), when an anchor contains itself, and when it nests deeper than
``files.MAX_NESTING``; a scalar the constructor cannot build (``2020-02-30``, ``!!int abc``) is an
error at its line, not a crash. Writing dumps data, never formats strings, so a value holding
quotes, newlines, ``{{ }}``, ``$()`` or ``---`` comes out as an inert quoted or block scalar. User
files that are edited in place use the round-trip pair, which keeps comments. ``dumps`` writes the
plain data most documents are (recipes, values files) itself, exactly as ruamel.yaml would, and
leaves everything else to ruamel.yaml: its pure-Python emitter was most of a recipe's or a
bundle's run.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shared import errors, files

_SPECIAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")
_INDENT_MAPPING = 2
_INDENT_SEQUENCE = 4
_INDENT_OFFSET = 2


# go-yaml's decode.go (gopkg.in/yaml.v2 since v2.2.8, the fix for CVE-2019-11253, which
# sigs.k8s.io/yaml and so Kubernetes use; gopkg.in/yaml.v3 the same): the share of decoded nodes
# that may come from expanding aliases, by the number decoded so far.
_ALIAS_RATIO_RANGE_LOW = 400_000
_ALIAS_RATIO_RANGE_HIGH = 4_000_000
_ALIASED_FLOOR = 100
_DECODED_FLOOR = 1000
_CONSTRUCTION_ERRORS = (ValueError, LookupError, TypeError, ArithmeticError, AttributeError)
"""What ruamel's constructors raise, instead of a YAMLError, on a scalar or tag they cannot build
(``2020-02-30``, ``!!int ""``, ``!!omap`` on a scalar in the round-trip loader)."""


def allowed_alias_ratio(decoded: int) -> float:
    """go-yaml's ``allowedAliasRatio``: 99% up to 400,000 decoded nodes, 10% from 4,000,000, linear between."""
    if decoded <= _ALIAS_RATIO_RANGE_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_RANGE_HIGH:
        return 0.10
    span = _ALIAS_RATIO_RANGE_HIGH - _ALIAS_RATIO_RANGE_LOW
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_RANGE_LOW) / span


class AliasBudget:
    """The nodes a go-yaml decode of one document would visit, with aliases expanded in place.

    go-yaml's ``decoder.unmarshal`` counts every node it visits (``decodeCount``) and those visited
    inside an alias's expansion (``aliasCount``), and fails with "document contains excessive
    aliasing" once more than 100 of over 1,000 come from aliases beyond ``allowed_alias_ratio``. An
    expansion adds the same count to both, so the share only grows while one lasts and checking at
    its end decides as go-yaml's check at every node does; the expansion's size comes from its
    anchor, so nothing is built. Up to 400,000 nodes this lets a document grow to 100 times the
    nodes it spells out (under two a byte, so at most about 50 times its size in bytes, plus 1,000),
    and beyond that to less and less. go-yaml counts a mapping's keys once more when it holds a
    ``<<`` merge key; this count does not, a difference of a few nodes.
    """

    def __init__(self) -> None:
        self.decoded = 1  # the document node
        self.aliased = 0

    def excessive(self) -> bool:
        return (
            self.aliased > _ALIASED_FLOOR
            and self.decoded > _DECODED_FLOOR
            and self.aliased / self.decoded > allowed_alias_ratio(self.decoded)
        )

    def visit(self) -> bool:
        """One node spelled out in the document; True when the budget is now exceeded."""
        self.decoded += 1
        return self.excessive()

    def expand(self, size: int) -> bool:
        """An alias node, then the ``size`` nodes its anchor decodes to; True when exceeded."""
        self.decoded += 1
        if self.excessive():
            return True
        self.decoded += size
        self.aliased += size
        return self.excessive()


class _Walk:
    """One document as it is composed: nesting depth, the ``AliasBudget`` and each anchor's size."""

    def __init__(self) -> None:
        self.budget = AliasBudget()
        self.sizes: dict[int, int] = {}  # id(anchored node) -> nodes it decodes to
        self.open: list[int] = [0]  # nodes decoded so far inside each node being composed
        self.depth = 0

    def enter(self, *, nested: bool) -> str | None:
        """A node spelled out begins; the reason to refuse the document, if any."""
        self.depth += nested
        if self.depth > files.MAX_NESTING:
            return f"nested deeper than {files.MAX_NESTING} levels"
        if self.budget.visit():
            return "document contains excessive aliasing"
        self.open.append(0)
        return None

    def leave(self, node: object, *, anchored: bool, nested: bool) -> None:
        size = 1 + self.open.pop()
        self.open[-1] += size
        if anchored:
            self.sizes[id(node)] = size
        self.depth -= nested

    def alias(self, target: object, anchor: str) -> str | None:
        """An alias to ``target``; the reason to refuse the document, if any."""
        size = self.sizes.get(id(target))
        if size is None:  # an anchor is registered before its content is composed
            return f"anchor {anchor!r} value contains itself"
        if self.budget.expand(size):
            return "document contains excessive aliasing"
        self.open[-1] += 1 + size
        return None


@functools.cache
def _composer() -> type:
    """ruamel's composer, counting what a go-yaml decode would and refusing what it would refuse."""
    from ruamel.yaml.composer import Composer
    from ruamel.yaml.error import MarkedYAMLError
    from ruamel.yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent

    class GuardedComposer(Composer):
        def __init__(self, loader: Any = None) -> None:
            super().__init__(loader)
            # A later anchor takes a name over, as in go-yaml; ruamel would also warn on stderr.
            self.warn_double_anchors = False
            self._walk = _Walk()

        def compose_document(self) -> Any:
            self._walk = _Walk()
            return super().compose_document()

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.parser.peek_event()
            if isinstance(event, AliasEvent):
                target = super().compose_node(parent, index)
                problem = self._walk.alias(target, event.anchor)
            else:
                nested = isinstance(event, MappingStartEvent | SequenceStartEvent)
                problem = self._walk.enter(nested=nested)
                if problem is None:
                    target = super().compose_node(parent, index)
                    self._walk.leave(target, anchored=event.anchor is not None, nested=nested)
            if problem is not None:
                raise MarkedYAMLError(None, None, problem, event.start_mark)
            return target

    return GuardedComposer


@functools.cache
def _scanner(kind: str) -> type:
    """ruamel's scanner, refusing a flow collection past ``files.MAX_NESTING`` as go-yaml's does past
    its ``max_flow_level`` (``scannerc.go``), before looking ahead through the rest of them."""
    from ruamel.yaml.scanner import RoundTripScanner, Scanner, ScannerError

    base: Any = Scanner if kind == "safe" else RoundTripScanner

    class GuardedScanner(base):  # type: ignore[misc]
        def fetch_flow_collection_start(self, token_class: Any, to_push: str) -> None:
            if self.flow_level >= files.MAX_NESTING:
                mark = self.reader.get_mark()
                raise ScannerError(None, None, f"nested deeper than {files.MAX_NESTING} levels", mark)
            super().fetch_flow_collection_start(token_class, to_push)

    return GuardedScanner


@functools.cache
def _constructor(kind: str) -> type:
    """ruamel's ``safe`` or ``rt`` constructor; a scalar it cannot build is an error at its line."""
    from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor, SafeConstructor
    from ruamel.yaml.nodes import ScalarNode

    base: Any = SafeConstructor if kind == "safe" else RoundTripConstructor

    class GuardedConstructor(base):  # type: ignore[misc]
        def construct_object(self, node: Any, deep: bool = False) -> Any:
            try:
                return super().construct_object(node, deep=deep)
            except _CONSTRUCTION_ERRORS as exc:
                tag = str(node.tag).rsplit(":", 1)[-1]
                what = f"{str(node.value)[:40]!r} as {tag}" if isinstance(node, ScalarNode) else f"the {tag}"
                raise ConstructorError(None, None, f"cannot read {what}: {exc}", node.start_mark) from exc

    return GuardedConstructor


def _loader(kind: str) -> Any:
    from ruamel.yaml import YAML

    yaml: Any = YAML(typ=kind, pure=True)
    yaml.Scanner = _scanner(kind)
    yaml.Composer = _composer()
    yaml.Constructor = _constructor(kind)
    return yaml


def _safe_loader() -> Any:
    yaml = _loader("safe")
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


_BREAKS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def _one_line(text: str) -> str:
    """A message quoting a key or value that holds line breaks stays one line: they are escaped."""
    return _BREAKS.sub(lambda match: repr(match.group())[1:-1], text)


def _problem(exc: Exception) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    text = " ".join(p for p in (context, problem) if p) or str(exc).splitlines()[0]
    return f"invalid YAML: {_one_line(text)}"


def _parsed(parse: Any, text: str, source: str) -> Any:
    """``parse(text)`` with every way a document can be refused turned into one InvalidInput."""
    from ruamel.yaml.error import YAMLError

    limit = files.max_input_bytes()
    if len(text) > limit:
        raise errors.InvalidInput(
            f"input is {len(text)} characters, more than the limit of {limit} bytes "
            f"(raise it with {files.MAX_INPUT_BYTES_ENV})",
            where=source,
        )
    try:
        return parse(text)
    except YAMLError as exc:
        raise errors.InvalidInput(_problem(exc), where=_where(source, exc)) from exc
    except RecursionError:
        # Only a caller already deep in its own stack gets here before MAX_NESTING does.
        raise errors.InvalidInput("invalid YAML: nested too deeply to read", where=source) from None
    except _CONSTRUCTION_ERRORS as exc:
        raise errors.InvalidInput(f"invalid YAML: {_one_line(str(exc))}", where=source) from exc


def loads(text: str, *, source: str = "<input>") -> Any:
    """Parse one YAML (or JSON) document into plain data; errors name ``source:line``."""
    return _parsed(lambda t: _safe_loader().load(t), text, source)


def loads_all(text: str, *, source: str = "<input>") -> list[Any]:
    """Parse every document of a multi-document stream; empty documents are dropped."""
    return _parsed(lambda t: [doc for doc in _safe_loader().load_all(t) if doc is not None], text, source)  # type: ignore[no-any-return]


def read_text(path: Path) -> str:
    """Read a user file as UTF-8 through ``shared.files``: every refusal is InvalidInput naming it."""
    return files.read_text(path)


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


class _NotPlain(Exception):
    """Raised inside ``_emit`` for data its rules do not cover: ruamel.yaml dumps that document."""


# ruamel.yaml's implicit resolvers for YAML 1.2, the version it writes (ruamel/yaml/resolver.py),
# each tried only on a scalar starting with one of its characters: a plain scalar matching one is
# not a string, so a string that matches is quoted.
_RESOLVERS = (
    ("tTfF", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")),
    (
        "-+0123456789.",
        re.compile(
            r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
            |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
            |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
            |[-+]?\.(?:inf|Inf|INF)
            |\.(?:nan|NaN|NAN))$""",
            re.X,
        ),
    ),
    ("-+0123456789", re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+)$")),
    ("<", re.compile(r"^(?:<<)$")),
    ("~nN", re.compile(r"^(?:~|null|Null|NULL)$")),
    (
        "0123456789",
        re.compile(
            r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
            |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?
            (?:[Tt]|[\ \t]+)[0-9][0-9]?
            :[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
            (?:[\ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
            re.X,
        ),
    ),
    ("=", re.compile(r"^(?:=)$")),
)
_PRINTABLE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")
"""One line of printable ASCII without leading or trailing space: the strings ``_emit`` writes."""
_LEADING_INDICATORS = "#,[]{}&*!|>'\"%@`"
_MAX_SIMPLE_KEY = 128


def _needs_quotes(text: str) -> bool:
    """Whether ruamel.yaml's scalar analysis forbids ``text`` as a plain block scalar (for the
    strings ``_PRINTABLE`` admits: indicators, comments, document markers, a type it resolves to)."""
    if any(text[0] in first and rule.match(text) for first, rule in _RESOLVERS):
        return True
    if text.startswith(("---", "...")):
        return True
    first, second = text[0], text[1:2]
    if first in _LEADING_INDICATORS or (first in "?:-" and second in ("", " ")):
        return True
    return ": " in text or " #" in text or text.endswith(":")


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is not str:
        raise _NotPlain  # floats, enums, ruamel's own scalar types: its representer decides
    if value == "":
        return "''"
    if not _PRINTABLE.fullmatch(value):
        raise _NotPlain  # line breaks, tabs, non-ASCII, edge spaces: literal or double-quoted blocks
    if not _needs_quotes(value):
        return value
    if "'" in value:
        raise _NotPlain  # ruamel.yaml double-quotes a string holding a quote
    return f"'{value}'"


def _emit_mapping(data: dict[Any, Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for key, value in data.items():
        if type(key) is not str or len(key) >= _MAX_SIMPLE_KEY:
            raise _NotPlain  # a long key is written as a ``? `` complex key
        name = _scalar(key)
        if isinstance(value, dict) and value:
            out.append(f"{pad}{name}:\n")
            _emit_mapping(value, indent + _INDENT_MAPPING, out)
        elif isinstance(value, list) and value:
            out.append(f"{pad}{name}:\n")
            _emit_sequence(value, indent + _INDENT_OFFSET, out)
        else:
            out.append(f"{pad}{name}: {_collection_or_scalar(value)}\n")


def _emit_sequence(data: list[Any], dash: int, out: list[str]) -> None:
    """Items at column ``dash``, their content two columns further (indent 4, offset 2)."""
    pad = " " * dash
    for item in data:
        if isinstance(item, dict) and item:
            start = len(out)
            _emit_mapping(item, dash + _INDENT_SEQUENCE - _INDENT_OFFSET, out)
            out[start] = f"{pad}- {out[start][dash + _INDENT_SEQUENCE - _INDENT_OFFSET :]}"
        elif isinstance(item, list) and item:
            raise _NotPlain  # a sequence in a sequence: rare, ruamel lays it out
        else:
            out.append(f"{pad}- {_collection_or_scalar(item)}\n")


def _collection_or_scalar(value: Any) -> str:
    if isinstance(value, dict | list):
        return "{}" if isinstance(value, dict) else "[]"  # empty: the non-empty ones are blocks
    return _scalar(value)


def _emit(data: Any) -> str | None:
    """Block YAML for the plain data most documents are (mappings, lists, ints, booleans, one-line
    ASCII strings), exactly as ruamel.yaml's dumper below writes it but without importing or
    running ruamel.yaml, which costs more than the rest of a recipe run; None for anything else.
    tests/test_yamlio_emit.py holds the two equal on every seed recipe and on generated data."""
    out: list[str] = []
    try:
        if isinstance(data, dict) and data:
            _emit_mapping(data, 0, out)
        elif isinstance(data, list) and data:
            _emit_sequence(data, _INDENT_OFFSET, out)
        else:
            return None
    except _NotPlain:
        return None
    return "".join(out)


def dumps(data: Any, *, indent: tuple[int, int, int] | None = None) -> str:
    """Dump plain data as block-style YAML with keys in their given order."""
    if indent is None:
        fast = _emit(data)
        if fast is not None:
            return fast
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
    return _parsed(lambda t: _loader("rt").load(t), text, source)


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
    try:
        node = load_roundtrip(text)
    except errors.InvalidInput:
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
