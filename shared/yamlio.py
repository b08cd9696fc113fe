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

Plain reading (``loads``, ``loads_all``, ``load_file``) goes through libyaml, PyYAML's C parser
and composer, with the YAML 1.2 core schema ruamel.yaml's safe loader resolves and the same
limits, and gives exactly the data ruamel.yaml would (tests/test_yamlio_fast.py): at 10,000 nodes
a snapshot took its pure-Python reader two seconds. Anything that reader is not sure to read as
ruamel.yaml does (a tag, a merge key, a directive, a flow collection, a time of day, tabs or carriage
returns, an unusual anchor name, a duplicate key, any error or refusal) is read again by ruamel.yaml,
so every message and every edge case is its own.
"""

from __future__ import annotations

import datetime
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


class _Unsure(Exception):
    """Raised inside the libyaml reader for what it is not sure to read as ruamel.yaml would."""


_PLAIN = "plain"  # the tags the libyaml reader's resolver gives: a plain scalar, to resolve as YAML 1.2 does,
_STRING = "string"  # a quoted or block scalar,
_UNTAGGED = "untagged"  # a mapping or sequence without a tag,
_NON_SPECIFIC = "!"  # and anything written with the non-specific tag ``!``.
_INF = float("inf")
_NAN = -_INF / _INF  # one object for every ``.nan``, as ruamel.yaml's constructor has
_WORDS: dict[str, Any] = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
}
"""The plain scalars YAML 1.2's bool and null resolvers match: exactly these words."""
_NUMERIC_START = frozenset("-+.0123456789")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_NAMED = re.compile(r"[&*]([^\s,\[\]{}]*)")
_NAME = re.compile(r"[-_0-9A-Za-z]+")
_TAG_START = re.compile(r"(?:^|[\s\[{,])!")
_LITERAL_HEADER = re.compile(r"\|(?:[-+][1-9]?|[1-9][-+]?)?\n")
"""A literal block's header as ruamel.yaml and libyaml both read it: indicators, then the line's end."""
_BLANK_LINE = re.compile(r" *(?:\n|$)")
_UNSURE_CHARACTERS = ("\t", "\r", "\x85", "\u2028", "\u2029", "\ufeff")
"""Tabs, carriage returns, YAML 1.1's other line breaks and byte order marks: read by ruamel.yaml."""


def _plain(value: str) -> Any:
    """A plain scalar as ruamel.yaml's safe loader builds it (YAML 1.2 resolvers and constructors)."""
    word = _WORDS.get(value, _Unsure)
    if word is not _Unsure:
        return word
    if value[0] in _NUMERIC_START:
        if _FLOAT.match(value):
            text = value.replace("_", "").lower()
            sign = -1 if text[0] == "-" else 1
            text = text[1:] if text[0] in "+-" else text
            if text == ".inf":
                return sign * _INF
            return _NAN if text == ".nan" else sign * float(text)
        if _INT.match(value):
            text = value.replace("_", "")
            sign = -1 if text[0] == "-" else 1
            text = text[1:] if text[0] in "+-" else text
            base = {"0b": 2, "0x": 16, "0o": 8}.get(text[:2])
            return sign * (int(text) if base is None else int(text[2:], base))
        if _TIMESTAMP.match(value):
            if not _DATE.fullmatch(value):
                raise _Unsure  # a time of day: ruamel.yaml's timezone handling decides
            return datetime.date(int(value[:4]), int(value[5:7]), int(value[8:10]))
    elif value == "<<":
        raise _Unsure  # a merge key
    return value  # a plain "=" included, read as other YAML readers read it


class _Build:
    """One composed document built into plain data, counting what ``_Walk`` counts: nesting, the
    ``AliasBudget`` and each anchor's size. Aliases are the same node object met again, so each
    anchor is built once and its size added to the budget at every alias."""

    def __init__(self, text: str, *, aliases: bool) -> None:
        from yaml.nodes import MappingNode, ScalarNode

        self.mapping_node, self.scalar_node = MappingNode, ScalarNode
        self.text = text
        self.budget = AliasBudget()
        self.depth = 0
        self.aliases = aliases
        self.built: dict[int, Any] = {}  # id(node) -> its data, for every node once aliases may occur
        self.sizes: dict[int, int] = {}  # id(node) -> nodes it decodes to, once built

    def document(self, root: Any) -> Any:
        if getattr(root, "style", None) == "|":
            raise _Unsure  # ruamel.yaml reads a document's ``---`` into a literal block at its top level
        return self.node(root)

    def node(self, node: Any) -> Any:
        if not self.aliases:
            return self.spelled(node)
        key = id(node)
        if key in self.built:
            size = self.sizes.get(key)
            if size is None or self.budget.expand(size):
                raise _Unsure  # an anchor that contains itself, or excessive aliasing
            return self.built[key]
        self.built[key] = None
        start = self.budget.decoded
        data = self.built[key] = self.spelled(node)
        self.sizes[key] = self.budget.decoded - start
        return data

    def spelled(self, node: Any) -> Any:
        budget = self.budget
        budget.decoded += 1
        if budget.aliased > _ALIASED_FLOOR and budget.excessive():
            raise _Unsure
        kind = type(node)
        if kind is self.scalar_node:
            return self.scalar(node)
        self.depth += 1
        if self.depth > files.MAX_NESTING or node.tag != _UNTAGGED or (node.flow_style and node.value):
            raise _Unsure
        if kind is self.mapping_node:
            data: Any = {}
            for key_node, value_node in node.value:
                if type(key_node) is not self.scalar_node:
                    raise _Unsure  # ruamel.yaml makes a sequence key a tuple and refuses a mapping
                key = self.node(key_node)
                value = self.node(value_node)
                if key in data:
                    raise _Unsure  # a duplicate key: ruamel.yaml's error names it
                data[key] = value
        else:
            data = [self.node(item) for item in node.value]
        self.depth -= 1
        return data

    def scalar(self, node: Any) -> Any:
        if node.tag == _PLAIN:
            return _plain(node.value)
        if node.tag != _STRING or node.style == ">":
            raise _Unsure  # a tag, or a folded block
        if node.style == "|":
            header = _LITERAL_HEADER.match(self.text, node.start_mark.index)
            if header is None:
                raise _Unsure  # a comment or spaces after a literal block's header
            if not any(ch.isdigit() for ch in header.group()) and _BLANK_LINE.match(self.text, header.end()):
                raise _Unsure  # ruamel.yaml refuses a blank first line with spaces when it finds the indentation
        return node.value


@functools.cache
def _libyaml() -> type | None:
    """PyYAML's C parser and composer with a resolver that only marks what the builder resolves."""
    try:
        from yaml import _yaml
        from yaml.nodes import ScalarNode
    except ImportError:  # PyYAML built without libyaml
        return None

    class Parser(_yaml.CParser):
        def resolve(self, kind: type, value: str | None, implicit: Any) -> str:
            if kind is ScalarNode:
                # libyaml marks a scalar tagged ``!`` as if plain: _TAG_START finds those first.
                return _PLAIN if implicit[0] else _STRING if implicit[1] else _NON_SPECIFIC
            return _UNTAGGED if implicit else _NON_SPECIFIC

        def descend_resolver(self, parent: Any, index: Any) -> None:
            pass

        def ascend_resolver(self) -> None:
            pass

    return Parser


def _plainly_written(text: str) -> bool:
    """Whether ``text`` holds none of what libyaml and ruamel.yaml may scan differently."""
    if any(ch in text for ch in _UNSURE_CHARACTERS):
        return False
    if any(text.startswith(mark) or f"\n{mark}" in text for mark in ("%", "...")):
        return False  # a directive (maybe %YAML 1.1) or a document end, which ruamel.yaml reads once
    if "!" in text and _TAG_START.search(text):
        return False
    # ruamel.yaml and libyaml end an anchor's or alias's name at different characters.
    return not ("*" in text or "&" in text) or all(_NAME.fullmatch(m.group(1)) for m in _NAMED.finditer(text))


def _fast(text: str, *, every: bool) -> Any:
    """The document (``every``: the list of documents) as ruamel.yaml's safe loader reads it, or
    ``_Unsure`` when the libyaml reader is not sure it would read the same."""
    parser_class = _libyaml()
    if parser_class is None or not _plainly_written(text):
        return _Unsure
    aliases = "*" in text
    try:
        parser = parser_class(text)
    except UnicodeError:  # a lone surrogate
        return _Unsure
    try:
        if not every:
            root = parser.get_single_node()
            return None if root is None else _Build(text, aliases=aliases).document(root)
        documents = []
        while parser.check_node():
            documents.append(_Build(text, aliases=aliases).document(parser.get_node()))
        return [document for document in documents if document is not None]
    except Exception:  # any error or doubt: ruamel.yaml reads it again and reports as it does
        return _Unsure
    finally:
        parser.dispose()


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


def _parsed(parse: Any, text: str, source: str, *, every: bool | None = None) -> Any:
    """``parse(text)`` with every way a document can be refused turned into one InvalidInput; with
    ``every`` set, the libyaml reader's result when it is sure of it (``_fast``)."""
    limit = files.max_input_bytes()
    if len(text) > limit:
        raise errors.InvalidInput(
            f"input is {len(text)} characters, more than the limit of {limit} bytes "
            f"(raise it with {files.MAX_INPUT_BYTES_ENV})",
            where=source,
        )
    if every is not None:
        data = _fast(text, every=every)
        if data is not _Unsure:
            return data
    from ruamel.yaml.error import YAMLError

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
    return _parsed(lambda t: _safe_loader().load(t), text, source, every=False)


def loads_all(text: str, *, source: str = "<input>") -> list[Any]:
    """Parse every document of a multi-document stream; empty documents are dropped."""
    return _parsed(  # type: ignore[no-any-return]
        lambda t: [doc for doc in _safe_loader().load_all(t) if doc is not None], text, source, every=True
    )


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
_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_INT = re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+)$")
_TIMESTAMP = re.compile(
    r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
    |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?
    (?:[Tt]|[\ \t]+)[0-9][0-9]?
    :[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
    (?:[\ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
    re.X,
)
_RESOLVERS = (
    ("tTfF", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")),
    ("-+0123456789.", _FLOAT),
    ("-+0123456789", _INT),
    ("<", re.compile(r"^(?:<<)$")),
    ("~nN", re.compile(r"^(?:~|null|Null|NULL)$")),
    ("0123456789", _TIMESTAMP),
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
