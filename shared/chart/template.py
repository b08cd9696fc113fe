"""The subset of Helm's template language our chart is written in, parsed and rendered in Python.

There is no helm binary where the chart is tested, and ``nvsentinel manifests`` / ``nvcrectl
manifests`` must render the same objects a ``helm install`` would. Rather than emulate Go templates
and sprig, the chart keeps to a small subset that this module implements exactly and that real
Helm renders identically. Anything else is refused with one line naming the template and line, so
a template edit that leaves the subset fails the tests instead of rendering differently here.

The subset (docs/architecture.md, "The chart and its template subset"):

- text, and actions ``{{ … }}`` with the trim markers ``{{- `` and `` -}}``; comments ``{{/* … */}}``;
- values: ``.Values.a.b``, ``.Release.Name``, ``.Release.Namespace``, ``.Chart.Name``,
  ``.Chart.Version``, ``.Chart.AppVersion``; literals ``"string"``, integers, ``true``, ``false``;
- pipelines ``X | f | g`` of the functions ``toYaml``, ``toJson``, ``nindent N``, ``indent N``,
  ``quote``, ``default D``, ``index X "k" …``, ``not``, ``and``, ``or``;
- ``{{- if PIPELINE }} … {{- else }} … {{- end }}`` (Go's truth: false, 0, "", empty and missing
  are false).

Stricter than Helm on purpose: printing a missing value or a map/list without ``toYaml`` is an
error, where Helm would print ``<no value>`` or ``map[…]`` into the manifest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shared import errors

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
def _truthy(value: Any) -> bool:
    if value is MISSING or value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str | dict | list | tuple):
        return len(value) > 0
    return True


def _format(value: Any) -> str:
    """Go's %v for the scalars values hold."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _to_yaml(value: Any) -> str:
    from shared import yamlio

    if value in ({}, []):
        return "{}" if value == {} else "[]"
    # Helm's toYaml (sigs.k8s.io/yaml): sequences flush with their key, no trailing newline.
    return yamlio.dumps(value, indent=(2, 2, 0)).rstrip("\n")


def _indent(width: Any, text: Any) -> str:
    pad = " " * int(width)
    return "\n".join(pad + line for line in str(text).split("\n"))


def _index(value: Any, *keys: Any) -> Any:
    for key in keys:
        if (isinstance(value, dict) and key in value) or (
            isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value)
        ):
            value = value[key]
        else:
            return MISSING
    return value


_FUNCS: dict[str, tuple[int, Callable[..., Any]]] = {
    # name: (fixed argument count before the piped value, -1 = any)
    "toYaml": (1, _to_yaml),
    "toJson": (1, lambda v: json.dumps(v, separators=(",", ":"), sort_keys=True)),
    "nindent": (2, lambda n, t: "\n" + _indent(n, t)),
    "indent": (2, _indent),
    "quote": (1, lambda v: json.dumps(_format(v))),
    "default": (2, lambda d, v: v if _truthy(v) else d),
    "index": (-1, _index),
    "not": (1, lambda v: not _truthy(v)),
    "and": (-1, lambda *vs: next((v for v in vs if not _truthy(v)), vs[-1])),
    "or": (-1, lambda *vs: next((v for v in vs if _truthy(v)), vs[-1])),
}


class _Renderer:
    def __init__(self, name: str, context: dict[str, Any]) -> None:
        self.name = name
        self.context = context

    def value(self, arg: Arg) -> Any:
        if isinstance(arg, Literal):
            return arg.value
        return _index(self.context, *arg.path)

    def run(self, pipeline: Pipeline) -> Any:
        result: Any = MISSING
        for number, command in enumerate(pipeline.commands):
            args = [self.value(a) for a in command.args]
            if command.name is None:
                result = args[0]
                continue
            if number > 0:
                args.append(result)
            arity, func = _FUNCS[command.name]
            if (arity >= 0 and len(args) != arity) or (arity < 0 and len(args) < 2):
                wanted = "at least 2" if arity < 0 else str(arity)
                raise _fail(self.name, pipeline.line, f"{command.name} takes {wanted} argument(s), got {len(args)}")
            if command.name in ("toYaml", "toJson", "nindent", "indent", "quote") and args[-1] is MISSING:
                raise _fail(self.name, pipeline.line, f"{command.name} of a missing value ({self._describe(pipeline)})")
            if command.name in ("nindent", "indent") and not isinstance(args[0], int):
                raise _fail(self.name, pipeline.line, f"{command.name} needs an integer width")
            result = func(*args)
        return result

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
                out.append(_format(value))
            else:
                self.render(node.then if _truthy(self.run(node.condition)) else node.otherwise, out)


def render(template: Template, context: dict[str, Any]) -> str:
    """The text of ``template`` for ``context`` (keys Values, Release, Chart); raises TemplateError."""
    out: list[str] = []
    _Renderer(template.name, context).render(template.nodes, out)
    return "".join(out)
