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
- values: ``.Values.a.b``, ``.Release.Name``, ``.Release.Namespace``, ``.Release.Service``,
  ``.Chart.Name``, ``.Chart.Version``, ``.Chart.AppVersion``; literals ``"string"``, integers,
  ``true``, ``false``; variables ``{{ $v := PIPELINE }}`` and ``$v.a.b`` (visible to the end of
  the block that declares them); parenthesised pipelines as operands, ``(X | f)``;
- pipelines ``X | f | g`` of the functions ``toYaml``, ``toJson``, ``toString``, ``nindent N``,
  ``indent N``, ``quote``, ``default D``, ``index X "k" …``, ``not``, ``and``, ``or``, ``eq``,
  ``ne``;
- ``{{- if PIPELINE }} … {{- else }} … {{- end }}`` (Go's truth: false, 0, "", empty and missing
  are false).

The same engine renders the chart and the recipe catalogs' manifests (``aicr bundle``, upstream's
templates included: variables, parentheses, ``toString``, ``ne`` are what those use). A renderer
can record which values a template read (:class:`Reads`), so the bundle can tell whether a
setting reached a manifest.

As in Helm, a field or ``index`` through a missing value or a scalar is an error (text/template's
message), ``and``/``or`` stop at the argument that decides, and ``indent`` takes only text.
Stricter than Helm on purpose: printing a missing or null value, or a map/list without ``toYaml``,
is an error, where Helm would print an empty string or ``map[…]`` into the manifest.

The syntax tree and the parser are in :mod:`shared.chart.template_syntax` (``parse`` is re-exported
here); this module renders a parsed template.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared import strvals
from shared.chart import gofmt, goyaml
from shared.chart.template_syntax import (
    Arg,
    Command,
    Declare,
    Field,
    Literal,
    Node,
    Output,
    Pipeline,
    Template,
    TemplateError,
    Text,
    Variable,
    error_at,
    parse,
)

__all__ = ["MISSING", "Reads", "Template", "TemplateError", "parse", "render"]


class _Missing:
    """A value that is not there: false in ``if``, an error when printed."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()


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


class Reads:
    """Which map keys a rendering looked up, and which values it printed whole (``toYaml``, ``toJson``).

    Keyed by the identity of the map, so it answers for the very values passed in
    (:meth:`covers`): a setting written into them reached the output only if a template read it.
    """

    def __init__(self) -> None:
        self.keys: set[tuple[int, str]] = set()
        self.whole: set[int] = set()

    def covers(self, values: dict[str, Any], path: tuple[str, ...]) -> bool:
        """Whether the value at ``path`` in ``values`` was read: every key on the way looked up,
        or a map on the way printed whole."""
        current: Any = values
        for key in path:
            if not isinstance(current, dict):
                return False
            if id(current) in self.whole:
                return True
            if (id(current), key) not in self.keys:
                return False
            current = current.get(key)
        return True


def _follow(value: Any, path: tuple[str, ...], text: str, reads: Reads | None) -> Any:
    """Fields followed over maps as text/template does (Helm's ``missingkey=zero``)."""
    for name in path:
        if value is MISSING or value is None:
            raise _GoError(f"at <{text}>: nil pointer evaluating interface {{}}.{name}")
        if not isinstance(value, dict):
            raise _GoError(f"at <{text}>: can't evaluate field {name} in type interface {{}}")
        if reads is not None:
            reads.keys.add((id(value), name))
        value = value.get(name, MISSING)
    return value


def _field(root: dict[str, Any], field: Field, reads: Reads | None = None) -> Any:
    """``.A.b.c`` as text/template evaluates it over maps (Helm's ``missingkey=zero``)."""
    return _follow(root, field.path, field.text(), reads)


def _to_string(value: Any) -> str:
    """``toString``: Go's ``%v`` of a scalar, ``<nil>`` for nothing; a map or list is outside the subset."""
    if value is MISSING or value is None:
        return "<nil>"
    if isinstance(value, dict | list):
        raise _GoError("toString of a map or list is outside the supported template subset")
    return gofmt.format_value(value)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "other"


def _eq(first: Any, *others: Any) -> bool:
    """text/template's ``eq``: true when the first argument equals any other; basic kinds only."""
    for other in others:
        kinds = (_kind(first), _kind(other))
        if "other" in kinds or kinds[0] != kinds[1]:
            raise _GoError("error calling eq: incompatible types for comparison")
        if first == other:
            return True
    return False


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
    "toString": (1, _to_string),
    "nindent": (2, lambda n, t: "\n" + _indent(n, t)),
    "indent": (2, _indent),
    "quote": (1, gofmt.quote),
    "default": (2, lambda d, v: v if _truthy(v) else d),
    "index": (-1, _index),
    "not": (1, lambda v: not _truthy(v)),
    "eq": (-1, _eq),
    "ne": (2, lambda a, b: not _eq(a, b)),
}


def _nindent_nonblank(width: int, text: str) -> str:
    """upstream AICR's manifest ``nindent``: a newline, then every non-empty line padded."""
    pad = " " * width
    return "\n" + "\n".join(pad + line if line else line for line in text.split("\n"))


MANIFEST_FUNCS: dict[str, tuple[int, Callable[..., Any]]] = {
    **_FUNCS,
    # upstream's bundler (pkg/manifest HelmFuncMap): only nothing or "" take the default, so
    # ``false | default true`` stays false, where sprig's default would turn it true.
    "default": (2, lambda d, v: d if v is MISSING or v is None or v == "" else v),
    "nindent": (2, _nindent_nonblank),
}
"""The functions as upstream AICR's bundler defines them for catalog manifests."""
HELM_FUNCS = _FUNCS
"""The functions as Helm (sprig) defines them, for our chart."""
_LAZY = ("and", "or")
"""Go's ``and``/``or`` stop at the first argument that decides (and do not evaluate the rest)."""


class _Renderer:
    def __init__(
        self,
        name: str,
        context: dict[str, Any],
        reads: Reads | None,
        funcs: dict[str, tuple[int, Callable[..., Any]]],
    ) -> None:
        self.name = name
        self.context = context
        self.reads = reads
        self.funcs = funcs
        self.scopes: list[dict[str, Any]] = [{}]

    def value(self, arg: Arg) -> Any:
        if isinstance(arg, Literal):
            return arg.value
        if isinstance(arg, Pipeline):
            return self._run(arg)
        if isinstance(arg, Variable):
            found = next(scope[arg.name] for scope in reversed(self.scopes) if arg.name in scope)
            return _follow(found, arg.path, arg.text(), self.reads)
        return _field(self.context, arg, self.reads)

    def run(self, pipeline: Pipeline) -> Any:
        try:
            return self._run(pipeline)
        except _GoError as exc:
            raise error_at(self.name, pipeline.line, str(exc)) from None

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
            result = self._call(command.name, args, pipeline)
        return result

    def _call(self, name: str, args: list[Any], pipeline: Pipeline) -> Any:
        arity, func = self.funcs[name]
        if (arity >= 0 and len(args) != arity) or (arity < 0 and len(args) < 2):
            wanted = "at least 2" if arity < 0 else str(arity)
            raise _GoError(f"{name} takes {wanted} argument(s), got {len(args)}")
        if name in ("toYaml", "toJson", "nindent", "indent", "quote") and args[-1] is MISSING:
            raise _GoError(f"{name} of a missing value ({self._describe(pipeline)})")
        if name in ("toYaml", "toJson") and isinstance(args[-1], dict | list) and self.reads is not None:
            self._printed_whole(args[-1])
        if name == "index" and self.reads is not None:
            self._indexed(args[0], args[1:])
        if name in ("nindent", "indent"):
            if type(args[0]) is not int:
                raise _GoError(f"{name} needs an integer width")
            if not isinstance(args[1], str):
                raise _GoError(f"wrong type for value; expected string; got {strvals.go_type(args[1])}")
        return func(*args)

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

    def _indexed(self, value: Any, keys: list[Any]) -> None:
        assert self.reads is not None
        for key in keys:
            if not isinstance(value, dict) or not isinstance(key, str):
                return
            self.reads.keys.add((id(value), key))
            value = value.get(key)

    def _printed_whole(self, value: Any) -> None:
        assert self.reads is not None
        if isinstance(value, dict):
            self.reads.whole.add(id(value))
            for item in value.values():
                self._printed_whole(item)
        elif isinstance(value, list):
            for item in value:
                self._printed_whole(item)

    def _describe(self, pipeline: Pipeline) -> str:
        fields = [a.text() for c in pipeline.commands for a in c.args if isinstance(a, Field | Variable)]
        return ", ".join(fields) or "a literal"

    def render(self, nodes: tuple[Node, ...] | list[Node], out: list[str]) -> None:
        for node in nodes:
            if isinstance(node, Text):
                out.append(node.text)
            elif isinstance(node, Output):
                value = self.run(node.pipeline)
                if value is MISSING or value is None:
                    raise error_at(self.name, node.pipeline.line, f"no value for {self._describe(node.pipeline)}")
                if isinstance(value, dict | list):
                    raise error_at(
                        self.name,
                        node.pipeline.line,
                        f"{self._describe(node.pipeline)} is a "
                        f"{'map' if isinstance(value, dict) else 'list'}: print it with toYaml",
                    )
                out.append(gofmt.format_value(value))
            elif isinstance(node, Declare):
                self.scopes[-1][node.name] = self.run(node.pipeline)
            else:
                branch = node.then if _truthy(self.run(node.condition)) else node.otherwise
                # A variable declared inside the block ends with it, as in text/template.
                self.scopes.append({})
                try:
                    self.render(branch, out)
                finally:
                    self.scopes.pop()


def render(
    template: Template,
    context: dict[str, Any],
    *,
    reads: Reads | None = None,
    funcs: dict[str, tuple[int, Callable[..., Any]]] = HELM_FUNCS,
) -> str:
    """The text of ``template`` for ``context`` (keys Values, Release, Chart); raises TemplateError.

    With ``reads``, every map key looked up and every map printed whole is recorded in it;
    ``funcs`` is :data:`HELM_FUNCS` (the chart) or :data:`MANIFEST_FUNCS` (catalog manifests).
    """
    out: list[str] = []
    _Renderer(template.name, context, reads, funcs).render(template.nodes, out)
    return "".join(out)
