"""The subset of Helm's template language our chart is written in, parsed and rendered in Python.

``nvsentinel manifests`` / ``nvcrectl manifests`` must render the same text a ``helm template``
would, without helm. Rather than emulate all of Go templates and sprig, the chart keeps to a small
subset that this module implements exactly, Go's printing and Helm's ``toYaml`` included
(:mod:`shared.chart.gofmt`, :mod:`shared.chart.goyaml`); tests/ship/test_helm_parity.py compares
the output with the pinned helm 3 and 4 byte for byte. Anything else is refused with one line
naming the template and line, so a template edit that leaves the subset fails the tests instead of
rendering differently here.

The subset (docs/architecture.md, "The chart and its template subset"):

- text, and actions ``{{ … }}`` with the trim markers ``{{- `` and `` -}}``; comments ``{{/* … */}}``;
- values: ``.Values.a.b``, ``.Release.Name``, ``.Release.Namespace``, ``.Chart.Name``,
  ``.Chart.Version``, ``.Chart.AppVersion``; literals ``"string"``, integers, ``true``, ``false``;
- pipelines ``X | f | g`` of the functions ``toYaml``, ``toJson``, ``nindent N``, ``indent N``,
  ``quote``, ``default D``, ``index X "k" …``, ``not``, ``and``, ``or``;
- ``{{- if PIPELINE }} … {{- else }} … {{- end }}`` (Go's truth: false, 0, "", empty and missing
  are false).

As in Helm, a field or ``index`` through a missing value or a scalar is an error (text/template's
message), ``and``/``or`` stop at the argument that decides, and ``indent`` takes only text.
Stricter than Helm on purpose: printing a missing or null value, or a map/list without ``toYaml``,
is an error, where Helm would print an empty string or ``map[…]`` into the manifest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shared import errors, strvals
from shared.chart import gofmt, goyaml

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_TOKEN = re.compile(
    r"""\s*(?:(?P<string>"(?:[^"\\\n]|\\.)*")|(?P<number>-?\d+)(?![\w.])|(?P<pipe>\|)"""
    r"""|(?P<field>(?:\.[A-Za-z_][A-Za-z0-9_]*)+)|(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?![\w.]))"""
)
ROOTS = {"Values": None, "Release": ("Name", "Namespace"), "Chart": ("Name", "Version", "AppVersion")}
FUNCTIONS = ("toYaml", "toJson", "nindent", "indent", "quote", "default", "index", "not", "and", "or")
_KEYWORDS = ("if", "else", "end")


class TemplateError(errors.InvalidInput):
    """A template outside the subset, or one that cannot render with these values."""


class _Missing:
    """A value that is not there: false in ``if``, an error when printed."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()


@dataclass(frozen=True)
class Literal:
    value: Any


@dataclass(frozen=True)
class Field:
    path: tuple[str, ...]

    def text(self) -> str:
        return "." + ".".join(self.path)


Arg = Literal | Field


@dataclass(frozen=True)
class Command:
    name: str | None
    """Function name, or None for a bare value."""
    args: tuple[Arg, ...]


@dataclass(frozen=True)
class Pipeline:
    commands: tuple[Command, ...]
    line: int


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Output:
    pipeline: Pipeline


@dataclass
class If:
    condition: Pipeline
    then: list[Node] = field(default_factory=list)
    otherwise: list[Node] = field(default_factory=list)
    has_else: bool = False


Node = Text | Output | If


@dataclass(frozen=True)
class Template:
    name: str
    nodes: tuple[Node, ...]


# ------------------------------------------------------------------ parsing
def _fail(name: str, line: int, message: str) -> TemplateError:
    return TemplateError(message, where=f"{name}:{line}")


def _parse_arg(name: str, line: int, kind: str, text: str) -> Arg:
    if kind == "string":
        try:
            return Literal(json.loads(text))
        except json.JSONDecodeError:
            raise _fail(name, line, f"string {text} uses an escape outside the subset") from None
    if kind == "number":
        return Literal(int(text))
    if kind == "field":
        path = tuple(text[1:].split("."))
        allowed = ROOTS.get(path[0], ())
        if path[0] not in ROOTS:
            raise _fail(name, line, f"{text}: only .Values, .Release and .Chart are in the subset")
        if allowed is not None and (len(path) != 2 or path[1] not in allowed):
            raise _fail(name, line, f"{text}: .{path[0]} offers only {', '.join(allowed)}")
        return Field(path)
    if text in ("true", "false"):
        return Literal(text == "true")
    raise _fail(name, line, f"{text!r} is a function, not a value (pipe into it: X | {text})")


def _tokens(name: str, line: int, source: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(source):
        if source[pos:].strip() == "":
            break
        match = _TOKEN.match(source, pos)
        if match is None:
            bad = source[pos:].strip().split()[0] if source[pos:].strip() else source[pos:]
            raise _fail(name, line, f"{bad!r} is outside the supported template subset")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def _parse_pipeline(name: str, line: int, tokens: list[tuple[str, str]]) -> Pipeline:
    commands: list[Command] = []
    current: list[tuple[str, str]] = []
    for token in [*tokens, ("pipe", "|")]:
        if token[0] != "pipe":
            current.append(token)
            continue
        if not current:
            raise _fail(name, line, "empty command in a pipeline")
        head_kind, head = current[0]
        if head_kind == "word" and head not in ("true", "false"):
            if head in _KEYWORDS:
                raise _fail(name, line, f"{head!r} must start its own action")
            if head not in FUNCTIONS:
                raise _fail(
                    name, line, f"function {head!r} is outside the supported template subset ({', '.join(FUNCTIONS)})"
                )
            args = tuple(_parse_arg(name, line, k, t) for k, t in current[1:])
            commands.append(Command(head, args))
        else:
            if len(current) > 1:
                raise _fail(name, line, f"{head} is a value and takes no arguments")
            if commands:
                raise _fail(name, line, f"only a function can follow '|', not {head}")
            commands.append(Command(None, (_parse_arg(name, line, head_kind, head),)))
        current = []
    return Pipeline(tuple(commands), line)


def parse(text: str, *, name: str) -> Template:
    """Parse ``text`` (the template called ``name``, e.g. ``templates/x.yaml``); raises TemplateError."""
    root: list[Node] = []
    stack: list[tuple[If, int]] = []
    pos = 0
    pending_trim = False

    def sink() -> list[Node]:
        if not stack:
            return root
        block = stack[-1][0]
        return block.otherwise if block.has_else else block.then

    while True:
        start = text.find("{{", pos)
        chunk = text[pos:] if start < 0 else text[pos:start]
        if pending_trim:
            chunk = chunk.lstrip()
        if start < 0:
            if chunk:
                sink().append(Text(chunk))
            break
        line = text.count("\n", 0, start) + 1
        match = _ACTION.match(text, start)
        if match is None:
            raise _fail(name, line, "'{{' is never closed")
        left, body, right = match.group(1), match.group(2), match.group(3)
        if body.startswith("-") and not left:
            raise _fail(name, line, "'{{-' needs a space after the dash")
        if body.endswith("-") and not right:
            raise _fail(name, line, "'-}}' needs a space before the dash")
        if left:
            chunk = chunk.rstrip()
        if chunk:
            sink().append(Text(chunk))
        pending_trim = bool(right)
        pos = match.end()
        body = body.strip()
        if body.startswith("/*"):
            if not body.endswith("*/"):
                raise _fail(name, line, "a comment must be {{/* … */}} alone in its action")
            continue
        if "{{" in body:
            raise _fail(name, line, "'{{' inside an action")
        head = re.match(r"[A-Za-z_]\w*", body)
        if head and head.group(0) not in (*FUNCTIONS, *_KEYWORDS, "true", "false"):
            raise _fail(
                name,
                line,
                f"function {head.group(0)!r} is outside the supported template subset ({', '.join(FUNCTIONS)})",
            )
        tokens = _tokens(name, line, body)
        if not tokens:
            raise _fail(name, line, "empty action")
        keyword = tokens[0][1] if tokens[0][0] == "word" else ""
        if keyword == "if":
            if len(tokens) == 1:
                raise _fail(name, line, "'if' needs a condition")
            block = If(_parse_pipeline(name, line, tokens[1:]))
            sink().append(block)
            stack.append((block, line))
        elif keyword == "else":
            if len(tokens) > 1:
                raise _fail(name, line, "'else if' and 'else' with arguments are outside the subset")
            if not stack or stack[-1][0].has_else:
                raise _fail(name, line, "'else' without 'if'")
            stack[-1][0].has_else = True
        elif keyword == "end":
            if len(tokens) > 1:
                raise _fail(name, line, "'end' takes no arguments")
            if not stack:
                raise _fail(name, line, "'end' without 'if'")
            stack.pop()
        else:
            sink().append(Output(_parse_pipeline(name, line, tokens)))
    if stack:
        raise _fail(name, stack[-1][1], "'if' is never closed with 'end'")
    return Template(name, tuple(root))


# ------------------------------------------------------------------ rendering
class _GoError(Exception):
    """A Go template execution error (text/template's or a function's), before it is given a place."""


def _truthy(value: Any) -> bool:
    """Go's truth: false, 0, "", nil, missing and empty lists and maps are false."""
    if value is MISSING or value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str | dict | list | tuple):
        return len(value) > 0
    return True


def _field(root: dict[str, Any], field: Field) -> Any:
    """``.A.b.c`` as text/template evaluates it over maps (Helm's ``missingkey=zero``)."""
    value: Any = root
    for name in field.path:
        if value is MISSING or value is None:
            raise _GoError(f"at <{field.text()}>: nil pointer evaluating interface {{}}.{name}")
        if not isinstance(value, dict):
            raise _GoError(f"at <{field.text()}>: can't evaluate field {name} in type interface {{}}")
        value = value.get(name, MISSING)
    return value


def _index(value: Any, *keys: Any) -> Any:
    """text/template's ``index``: a missing map key is missing, anything else out of place is an error."""
    if value is MISSING or value is None:
        raise _GoError("error calling index: index of untyped nil")
    for key in keys:
        if value is MISSING or value is None:
            raise _GoError("error calling index: index of nil pointer")
        if isinstance(value, dict):
            if not isinstance(key, str):
                raise _GoError(f"error calling index: value has type {strvals.go_type(key)}; should be string")
            value = value.get(key, MISSING)
        elif isinstance(value, list):
            if isinstance(key, bool) or not isinstance(key, int):
                raise _GoError(f"error calling index: cannot index slice/array with type {strvals.go_type(key)}")
            if not 0 <= key < len(value):
                raise _GoError(f"error calling index: index out of range: {key}")
            value = value[key]
        elif isinstance(value, str):
            raise _GoError("indexing a string is outside the supported template subset")
        else:
            raise _GoError(f"error calling index: can't index item of type {strvals.go_type(value)}")
    return value


def _indent(width: int, text: str) -> str:
    """sprig's ``indent``: every line, empty ones too, gets the padding."""
    pad = " " * width
    return pad + text.replace("\n", "\n" + pad)


def _to_json(value: Any) -> str:
    try:
        return gofmt.to_json(value)
    except gofmt.UnsupportedValue:
        # sprig's toJson prints nothing when json.Marshal fails.
        return ""


_FUNCS: dict[str, tuple[int, Callable[..., Any]]] = {
    # name: (fixed argument count before the piped value, -1 = any)
    "toYaml": (1, goyaml.to_yaml),
    "toJson": (1, _to_json),
    "nindent": (2, lambda n, t: "\n" + _indent(n, t)),
    "indent": (2, _indent),
    "quote": (1, gofmt.quote),
    "default": (2, lambda d, v: v if _truthy(v) else d),
    "index": (-1, _index),
    "not": (1, lambda v: not _truthy(v)),
}
_LAZY = ("and", "or")
"""Go's ``and``/``or`` stop at the first argument that decides (and do not evaluate the rest)."""


class _Renderer:
    def __init__(self, name: str, context: dict[str, Any]) -> None:
        self.name = name
        self.context = context

    def value(self, arg: Arg) -> Any:
        if isinstance(arg, Literal):
            return arg.value
        return _field(self.context, arg)

    def run(self, pipeline: Pipeline) -> Any:
        try:
            return self._run(pipeline)
        except _GoError as exc:
            raise _fail(self.name, pipeline.line, str(exc)) from None

    def _run(self, pipeline: Pipeline) -> Any:
        result: Any = MISSING
        for number, command in enumerate(pipeline.commands):
            if command.name is None:
                result = self.value(command.args[0])
                continue
            if command.name in _LAZY:
                result = self._and_or(command, piped=(result,) if number > 0 else ())
                continue
            args = [self.value(a) for a in command.args]
            if number > 0:
                args.append(result)
            arity, func = _FUNCS[command.name]
            if (arity >= 0 and len(args) != arity) or (arity < 0 and len(args) < 2):
                wanted = "at least 2" if arity < 0 else str(arity)
                raise _GoError(f"{command.name} takes {wanted} argument(s), got {len(args)}")
            if command.name in ("toYaml", "toJson", "nindent", "indent", "quote") and args[-1] is MISSING:
                raise _GoError(f"{command.name} of a missing value ({self._describe(pipeline)})")
            if command.name in ("nindent", "indent"):
                if type(args[0]) is not int:
                    raise _GoError(f"{command.name} needs an integer width")
                if not isinstance(args[1], str):
                    raise _GoError(f"wrong type for value; expected string; got {strvals.go_type(args[1])}")
            result = func(*args)
        return result

    def _and_or(self, command: Command, *, piped: tuple[Any, ...]) -> Any:
        if len(command.args) + len(piped) < 2:
            raise _GoError(f"{command.name} takes at least 2 argument(s), got {len(command.args) + len(piped)}")
        deciding = command.name == "or"
        value: Any = MISSING
        for arg in command.args:
            value = self.value(arg)
            if _truthy(value) == deciding:
                return value
        return piped[0] if piped else value

    def _describe(self, pipeline: Pipeline) -> str:
        fields = [a.text() for c in pipeline.commands for a in c.args if isinstance(a, Field)]
        return ", ".join(fields) or "a literal"

    def render(self, nodes: tuple[Node, ...] | list[Node], out: list[str]) -> None:
        for node in nodes:
            if isinstance(node, Text):
                out.append(node.text)
            elif isinstance(node, Output):
                value = self.run(node.pipeline)
                if value is MISSING or value is None:
                    raise _fail(self.name, node.pipeline.line, f"no value for {self._describe(node.pipeline)}")
                if isinstance(value, dict | list):
                    raise _fail(
                        self.name,
                        node.pipeline.line,
                        f"{self._describe(node.pipeline)} is a "
                        f"{'map' if isinstance(value, dict) else 'list'}: print it with toYaml",
                    )
                out.append(gofmt.format_value(value))
            else:
                self.render(node.then if _truthy(self.run(node.condition)) else node.otherwise, out)


def render(template: Template, context: dict[str, Any]) -> str:
    """The text of ``template`` for ``context`` (keys Values, Release, Chart); raises TemplateError."""
    out: list[str] = []
    _Renderer(template.name, context).render(template.nodes, out)
    return "".join(out)
