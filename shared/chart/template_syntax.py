"""The Helm template subset's syntax tree and parser, for :mod:`shared.chart.template`.

A template is text and actions; an action is a comment, ``if``/``else``/``end``, a variable
declaration ``$name := PIPELINE`` or a pipeline of values, variables (``$name.a.b``),
parenthesised pipelines and the subset's functions. The parser refuses anything else with one line
naming the template and the line (the subset and why it is small: :mod:`shared.chart.template`);
rendering the tree is :mod:`shared.chart.template`'s.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from shared import errors

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_TOKEN = re.compile(
    r"""\s*(?:(?P<string>"(?:[^"\\\n]|\\.)*")|(?P<number>-?\d+)(?![\w.])|(?P<pipe>\|)"""
    r"""|(?P<declare>:=)|(?P<open>\()|(?P<close>\))"""
    r"""|(?P<variable>\$[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?![\w.$])"""
    r"""|(?P<field>(?:\.[A-Za-z_][A-Za-z0-9_]*)+)|(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?![\w.]))"""
)
ROOTS = {"Values": None, "Release": ("Name", "Namespace", "Service"), "Chart": ("Name", "Version", "AppVersion")}
FUNCTIONS = (
    "toYaml",
    "toJson",
    "toString",
    "nindent",
    "indent",
    "quote",
    "default",
    "index",
    "not",
    "and",
    "or",
    "eq",
    "ne",
)
_KEYWORDS = ("if", "else", "end")


class TemplateError(errors.InvalidInput):
    """A template outside the subset, or one that cannot render with these values."""


@dataclass(frozen=True)
class Literal:
    value: Any


@dataclass(frozen=True)
class Field:
    path: tuple[str, ...]

    def text(self) -> str:
        return "." + ".".join(self.path)


@dataclass(frozen=True)
class Variable:
    """``$name`` or ``$name.a.b``: a declared variable and the fields followed from it."""

    name: str
    path: tuple[str, ...]

    def text(self) -> str:
        return "".join(("$" + self.name, *("." + part for part in self.path)))


@dataclass(frozen=True)
class Command:
    name: str | None
    """Function name, or None for a bare value."""
    args: tuple[Arg, ...]


@dataclass(frozen=True)
class Pipeline:
    commands: tuple[Command, ...]
    line: int


Arg = Literal | Field | Variable | Pipeline
"""An operand: a literal, a field, a variable, or a parenthesised pipeline."""


@dataclass(frozen=True)
class Declare:
    """``{{ $name := PIPELINE }}``: prints nothing; the variable lives until its block's ``end``."""

    name: str
    pipeline: Pipeline


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


Node = Text | Output | If | Declare


@dataclass(frozen=True)
class Template:
    name: str
    nodes: tuple[Node, ...]


# ------------------------------------------------------------------ parsing
def error_at(name: str, line: int, message: str) -> TemplateError:
    return TemplateError(message, where=f"{name}:{line}")


def _parse_arg(name: str, line: int, kind: str, text: str, declared: set[str]) -> Arg:
    if kind == "string":
        try:
            return Literal(json.loads(text))
        except json.JSONDecodeError:
            raise error_at(name, line, f"string {text} uses an escape outside the subset") from None
    if kind == "number":
        return Literal(int(text))
    if kind == "variable":
        return _variable(name, line, text, declared)
    if kind == "field":
        path = tuple(text[1:].split("."))
        allowed = ROOTS.get(path[0], ())
        if path[0] not in ROOTS:
            raise error_at(name, line, f"{text}: only .Values, .Release and .Chart are in the subset")
        if allowed is not None and (len(path) != 2 or path[1] not in allowed):
            raise error_at(name, line, f"{text}: .{path[0]} offers only {', '.join(allowed)}")
        return Field(path)
    if text in ("true", "false"):
        return Literal(text == "true")
    if kind in ("declare", "close"):
        raise error_at(name, line, f"unexpected {text!r} in a pipeline")
    raise error_at(name, line, f"{text!r} is a function, not a value (pipe into it: X | {text})")


def _tokens(name: str, line: int, source: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(source):
        if source[pos:].strip() == "":
            break
        match = _TOKEN.match(source, pos)
        if match is None:
            bad = source[pos:].strip().split()[0] if source[pos:].strip() else source[pos:]
            raise error_at(name, line, f"{bad!r} is outside the supported template subset")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def _variable(name: str, line: int, text: str, declared: set[str]) -> Variable:
    var, *path = text[1:].split(".")
    if var not in declared:
        raise error_at(name, line, f'undefined variable "${var}"')
    return Variable(var, tuple(path))


class _PipelineParser:
    """Commands separated by ``|``; an operand in parentheses is a pipeline of its own."""

    def __init__(self, name: str, line: int, tokens: list[tuple[str, str]], declared: set[str]) -> None:
        self.name, self.line, self.tokens, self.declared = name, line, tokens, declared
        self.pos = 0

    def error(self, message: str) -> TemplateError:
        return error_at(self.name, self.line, message)

    def pipeline(self, *, nested: bool) -> Pipeline:
        commands: list[Command] = []
        while True:
            commands.append(self.command(first=not commands))
            if self.pos >= len(self.tokens):
                if nested:
                    raise self.error("'(' is never closed with ')'")
                break
            kind = self.tokens[self.pos][0]
            if kind == "close":
                if not nested:
                    raise self.error("')' without '('")
                break
            self.pos += 1  # the pipe
        return Pipeline(tuple(commands), self.line)

    def operands(self) -> list[tuple[str, str] | Pipeline]:
        found: list[tuple[str, str] | Pipeline] = []
        while self.pos < len(self.tokens) and self.tokens[self.pos][0] not in ("pipe", "close"):
            token = self.tokens[self.pos]
            self.pos += 1
            if token[0] == "open":
                found.append(self.pipeline(nested=True))
                self.pos += 1  # the closing parenthesis
            else:
                found.append(token)
        return found

    def arg(self, operand: tuple[str, str] | Pipeline) -> Arg:
        if isinstance(operand, Pipeline):
            return operand
        return _parse_arg(self.name, self.line, operand[0], operand[1], self.declared)

    def command(self, *, first: bool) -> Command:
        current = self.operands()
        if not current:
            raise self.error("empty command in a pipeline")
        head = current[0]
        if not isinstance(head, Pipeline) and head[0] == "word" and head[1] not in ("true", "false"):
            if head[1] in _KEYWORDS:
                raise self.error(f"{head[1]!r} must start its own action")
            if head[1] not in FUNCTIONS:
                raise self.error(
                    f"function {head[1]!r} is outside the supported template subset ({', '.join(FUNCTIONS)})"
                )
            return Command(head[1], tuple(self.arg(o) for o in current[1:]))
        shown = "(…)" if isinstance(head, Pipeline) else head[1]
        if len(current) > 1:
            raise self.error(f"{shown} is a value and takes no arguments")
        if not first:
            raise self.error(f"only a function can follow '|', not {shown}")
        return Command(None, (self.arg(head),))


def _parse_pipeline(name: str, line: int, tokens: list[tuple[str, str]], declared: set[str]) -> Pipeline:
    parser = _PipelineParser(name, line, tokens, declared)
    return parser.pipeline(nested=False)


class _Parser:
    """One pass over a template's text: text between actions, and each action in turn."""

    def __init__(self, text: str, name: str) -> None:
        self.text = text
        self.name = name
        self.root: list[Node] = []
        self.open: list[tuple[If, int]] = []  # the ``if`` blocks not yet ended, with their lines
        self.scopes: list[set[str]] = [set()]  # variables declared, per open block (Go's scoping)

    def sink(self) -> list[Node]:
        """Where the next node goes: the innermost open block's current branch, or the top level."""
        if not self.open:
            return self.root
        block = self.open[-1][0]
        return block.otherwise if block.has_else else block.then

    def parse(self) -> Template:
        pos, trim = 0, False
        while (start := self.text.find("{{", pos)) >= 0:
            line = self.text.count("\n", 0, start) + 1
            match = _ACTION.match(self.text, start)
            if match is None:
                raise error_at(self.name, line, "'{{' is never closed")
            left, body, right = match.group(1), match.group(2), match.group(3)
            if body.startswith("-") and not left:
                raise error_at(self.name, line, "'{{-' needs a space after the dash")
            if body.endswith("-") and not right:
                raise error_at(self.name, line, "'-}}' needs a space before the dash")
            self.add_text(self.text[pos:start], trim_left=trim, trim_right=bool(left))
            trim, pos = bool(right), match.end()
            self.action(body.strip(), line)
        self.add_text(self.text[pos:], trim_left=trim, trim_right=False)
        if self.open:
            raise error_at(self.name, self.open[-1][1], "'if' is never closed with 'end'")
        return Template(self.name, tuple(self.root))

    def add_text(self, chunk: str, *, trim_left: bool, trim_right: bool) -> None:
        """Text between actions, less the whitespace a trim marker beside it removes."""
        if trim_left:
            chunk = chunk.lstrip()
        if trim_right:
            chunk = chunk.rstrip()
        if chunk:
            self.sink().append(Text(chunk))

    def action(self, body: str, line: int) -> None:
        """One ``{{ … }}``: a comment, ``if``/``else``/``end``, or a pipeline to print."""
        if body.startswith("/*"):
            if not body.endswith("*/"):
                raise error_at(self.name, line, "a comment must be {{/* … */}} alone in its action")
            return
        if "{{" in body:
            raise error_at(self.name, line, "'{{' inside an action")
        head = re.match(r"[A-Za-z_]\w*", body)
        if head and head.group(0) not in (*FUNCTIONS, *_KEYWORDS, "true", "false"):
            raise error_at(
                self.name,
                line,
                f"function {head.group(0)!r} is outside the supported template subset ({', '.join(FUNCTIONS)})",
            )
        tokens = _tokens(self.name, line, body)
        if not tokens:
            raise error_at(self.name, line, "empty action")
        keyword = tokens[0][1] if tokens[0][0] == "word" else ""
        if tokens[0][0] == "variable" and len(tokens) > 1 and tokens[1][0] == "declare":
            self.declare(tokens, line)
        elif keyword == "if":
            self.start_if(tokens[1:], line)
        elif keyword == "else":
            self.start_else(tokens[1:], line)
        elif keyword == "end":
            self.end(tokens[1:], line)
        else:
            self.sink().append(Output(_parse_pipeline(self.name, line, tokens, self.visible())))

    def visible(self) -> set[str]:
        return set().union(*self.scopes)

    def declare(self, tokens: list[tuple[str, str]], line: int) -> None:
        """``$name := PIPELINE``; the name is visible from the next action to its block's end."""
        var = tokens[0][1][1:]
        if "." in var:
            raise error_at(self.name, line, f"cannot declare a field: ${var}")
        if len(tokens) < 3:
            raise error_at(self.name, line, f"missing value for ${var} :=")
        pipeline = _parse_pipeline(self.name, line, tokens[2:], self.visible())
        self.scopes[-1].add(var)
        self.sink().append(Declare(var, pipeline))

    def start_if(self, condition: list[tuple[str, str]], line: int) -> None:
        if not condition:
            raise error_at(self.name, line, "'if' needs a condition")
        block = If(_parse_pipeline(self.name, line, condition, self.visible()))
        self.sink().append(block)
        self.open.append((block, line))
        self.scopes.append(set())

    def start_else(self, args: list[tuple[str, str]], line: int) -> None:
        if args:
            raise error_at(self.name, line, "'else if' and 'else' with arguments are outside the subset")
        if not self.open or self.open[-1][0].has_else:
            raise error_at(self.name, line, "'else' without 'if'")
        self.open[-1][0].has_else = True

    def end(self, args: list[tuple[str, str]], line: int) -> None:
        if args:
            raise error_at(self.name, line, "'end' takes no arguments")
        if not self.open:
            raise error_at(self.name, line, "'end' without 'if'")
        self.open.pop()
        self.scopes.pop()


def parse(text: str, *, name: str) -> Template:
    """Parse ``text`` (the template called ``name``, e.g. ``templates/x.yaml``); raises TemplateError."""
    return _Parser(text, name).parse()
