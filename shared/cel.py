"""CEL expressions: the only module that imports celpy.

Every expression is compiled when its configuration loads, so a typo fails the load with the rule's
name, the expression and the position, never later on a live event. One Environment per process
(the first costs ~80 ms to build its parser); programs are kept and reused.

celpy's CompiledRunner transpiles an expression to Python once and runs about five times faster
than its interpreter (research/python-stack.md §2), which the fault-quarantine throughput needs.
Its own ``evaluate`` is not thread-safe (it parks the activation in module globals and re-runs
the module source each call), and resolving a variable costs more than the expression (every
``activation.event`` goes through a typing-heavy name lookup). So each program's transpiled source
is executed once, into a private namespace, with its final ``CEL = result(base_activation, ...)``
statement turned into a function: evaluating is one call with a prepared activation, touches no
shared state and needs no lock. ``activation`` prepares the variables once (the same clone-and-load
celpy does per call) and binds plain top-level names as attributes, so ``activation.event`` is a
direct lookup; nested (macro) activations still resolve through celpy. If a transpiled source ever
does not have the expected shape, that program falls back to celpy's runner under a lock.

The cel-go ``ext.Strings()`` functions upstream rules use
are module-level functions here, because transpiled code calls them as ``shared.cel.<name>``.
Callers convert each input once with ``to_cel`` and reuse it for every program.

CustomResourceDefinition rules (``self``/``oldSelf``) compile separately (``compile_rule``): celpy's
interpreter with the Kubernetes CEL library functions they commonly call, evaluated under a lock.
Those functions are plain Python in ``shared.cel_library``; ``_bound`` makes their results CEL
values and their refusals celpy's evaluation errors.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from shared import cel_library, errors

logging.getLogger("celpy").setLevel(logging.CRITICAL)

_ENVIRONMENT: Any = None
_EVAL_LOCK = threading.Lock()


class EvaluationError(Exception):
    """An expression failed on this input (a missing field, a type mismatch); not a config error."""


def _environment() -> Any:
    global _ENVIRONMENT  # noqa: PLW0603 - one parser per process, built on first use
    if _ENVIRONMENT is None:
        import celpy
        import celpy.evaluation

        # Transpiled programs resolve custom functions as ``shared.cel.<name>`` in celpy's globals.
        celpy.evaluation.shared = sys.modules["shared"]  # type: ignore[attr-defined]
        _ENVIRONMENT = celpy.Environment(runner_class=celpy.CompiledRunner)
    return _ENVIRONMENT


def _text(value: Any) -> Any:
    from celpy import celtypes

    return celtypes.StringType(value)


def lowerAscii(s: Any) -> Any:
    return _text(str(s).lower())


def upperAscii(s: Any) -> Any:
    return _text(str(s).upper())


def trim(s: Any) -> Any:
    return _text(str(s).strip())


def replace(s: Any, old: Any, new: Any, *n: Any) -> Any:
    return _text(str(s).replace(str(old), str(new), *(int(x) for x in n)))


def split(s: Any, sep: Any, *n: Any) -> Any:
    from celpy import celtypes

    limit = [int(x) - 1 for x in n if int(x) > 0]
    return celtypes.ListType([_text(p) for p in str(s).split(str(sep), *limit)])


def join(items: Any, sep: Any = "") -> Any:
    return _text(str(sep).join(str(i) for i in items))


def indexOf(s: Any, sub: Any) -> Any:
    from celpy import celtypes

    return celtypes.IntType(str(s).find(str(sub)))


_STRING_EXTENSIONS = {f.__name__: f for f in (lowerAscii, upperAscii, trim, replace, split, join, indexOf)}
STRING_EXTENSIONS = frozenset(_STRING_EXTENSIONS)
"""The functions health rules get besides celpy's own (``shared.health.ruletypes`` declares their types)."""


_BASE_ACTIVATION: Any = None
_FINAL = "CEL = celpy.evaluation.result(base_activation, "


class Activation:
    """Variables prepared once for any number of programs (``Program.evaluate`` also takes a dict)."""

    __slots__ = ("_celpy", "variables")

    def __init__(self, variables: Mapping[str, Any]) -> None:
        # Exactly what celpy's Transpiler.evaluate builds per call: a clone of the runner's base
        # activation (same environment and functions for every program compiled here) with the
        # variables loaded; plus each plain name as an attribute, which is what transpiled code reads.
        self.variables = dict(variables)
        act = _BASE_ACTIVATION.clone()
        if variables:
            act.identifiers.load_values(dict(variables))
            for key, value in variables.items():
                if key.isidentifier() and key not in act.__dict__ and not hasattr(type(act), key):
                    act.__dict__[key] = value
        self._celpy = act


def activation(variables: Mapping[str, Any]) -> Activation:
    """Prepare ``variables`` (already converted with ``to_cel``) for evaluating several programs."""
    try:
        return Activation(variables)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise EvaluationError(f"{type(exc).__name__}: {exc}") from None


def _direct(source: str) -> Any:
    """The transpiled program as a function of the activation, or None when the source is unexpected."""
    import celpy.evaluation

    head, sep, tail = source.rpartition("\n" + _FINAL)
    if not sep:
        if not source.startswith(_FINAL):
            return None
        head, tail = "", source[len(_FINAL) :]
    if _FINAL in head or "\n" in tail.strip():
        return None
    namespace = dict(vars(celpy.evaluation))
    namespace.pop("base_activation", None)
    namespace.pop("CEL", None)
    code = f"{head}\ndef _nvs_program(base_activation):\n    return celpy.evaluation.result(base_activation, {tail}"
    try:
        exec(code, namespace)
    except SyntaxError:
        return None
    return namespace["_nvs_program"]


@dataclass(frozen=True)
class Program:
    """A compiled expression, ready to evaluate many times."""

    name: str
    expression: str
    runner: Any
    direct: Any = None

    def evaluate(self, activation: Mapping[str, Any] | Activation) -> Any:
        """The result as a Python value; EvaluationError when the input does not fit the expression."""
        return self.as_python(self.evaluate_raw(activation))

    def evaluate_raw(self, activation: Mapping[str, Any] | Activation) -> Any:
        """The CEL result, unconverted; EvaluationError as ``evaluate``."""
        from celpy.evaluation import CELEvalError

        try:
            if self.direct is None:
                variables = activation.variables if isinstance(activation, Activation) else activation
                with _EVAL_LOCK:
                    result = self.runner.evaluate(dict(variables))
            else:
                prepared = activation if isinstance(activation, Activation) else Activation(activation)
                try:
                    result = self.direct(prepared._celpy)
                    if isinstance(result, CELEvalError):
                        raise result
                except Exception as ex:  # as celpy's Transpiler.evaluate wraps it
                    raise CELEvalError("evaluation error", type(ex), ex.args) from None
        except CELEvalError as exc:
            raise EvaluationError(_eval_message(exc)) from None
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise EvaluationError(f"{type(exc).__name__}: {exc}") from None
        if isinstance(result, CELEvalError):
            raise EvaluationError(_eval_message(result))
        return result

    def as_python(self, result: Any) -> Any:
        return _to_python(result)

    def as_bool(self, value: Any) -> bool:
        """``value`` (from ``evaluate``) where a boolean is needed; EvaluationError otherwise."""
        if not isinstance(value, bool):
            raise EvaluationError(f"rule {self.name!r} returned {type(value).__name__}, not a boolean")
        return value

    def evaluate_bool(self, activation: Mapping[str, Any] | Activation) -> bool:
        return self.as_bool(self.evaluate(activation))


def _eval_message(exc: Any) -> str:
    """The root cause: the compiled runner wraps it as ('evaluation error', type, inner args)."""
    args: Any = getattr(exc, "args", ())
    while len(args) >= 3 and args[0] == "evaluation error" and isinstance(args[2], tuple) and args[2]:
        args = args[2]
    return str(args[0]) if args else str(exc)


def compile(expression: str, *, name: str, where: str | None = None) -> Program:
    """Compile and prepare ``expression``; a syntax error names the rule, the position and a caret."""
    from celpy.celparser import CELParseError

    env = _environment()
    try:
        ast = env.compile(expression)
        runner = env.program(ast, functions=_STRING_EXTENSIONS)
    except CELParseError as exc:
        line, column = getattr(exc, "line", None), getattr(exc, "column", None)
        position = f" at line {line}, column {column}" if line is not None else ""
        raise errors.InvalidInput(f"rule {name!r}: invalid CEL{position}: {expression!r}", where=where) from None
    except (SyntaxError, ValueError, TypeError) as exc:  # the transpiler refuses a construct
        raise errors.InvalidInput(f"rule {name!r}: unsupported CEL ({exc}): {expression!r}", where=where) from None
    global _BASE_ACTIVATION  # noqa: PLW0603 - every program here shares one environment and function set
    if _BASE_ACTIVATION is None:
        _BASE_ACTIVATION = runner.tp.base_activation
    return Program(name=name, expression=expression, runner=runner, direct=_direct(runner.tp.source_text))


_KEYS: dict[Any, Any] = {}
_KEY_CACHE_SIZE = 4096
_CONVERT: Any = None


def _converter() -> Any:
    """Build ``to_cel``'s walk once: exact JSON types dispatch first, anything else as before."""
    from celpy import celtypes

    text_type, int_type, map_type, list_type = (
        celtypes.StringType,
        celtypes.IntType,
        celtypes.MapType,
        celtypes.ListType,
    )
    new_str, new_int, new_dict = str.__new__, int.__new__, dict.__new__
    # BoolType is immutable: one instance each serves every value.
    singletons = {True: celtypes.BoolType(True), False: celtypes.BoolType(False), None: None}
    key = _map_key(text_type)
    low, high = -(2**63), 2**63

    def convert(item: Any) -> Any:
        kind = type(item)
        if kind is str:
            return new_str(text_type, item)  # StringType.__new__ on a str is exactly this
        if kind is dict:
            # MapType() is a plain dict with no state of its own; dict.update skips MapType.__init__'s
            # isinstance checks against typing ABCs (slow).
            mapping = new_dict(map_type)
            dict.update(mapping, {key(k): convert(v) for k, v in item.items()})
            return mapping
        if kind is bool or item is None:
            return singletons[item]
        if kind is int and low <= item < high:  # IntType's own constructor re-checks this, slowly
            return new_int(int_type, item)
        if kind is list:
            return list_type([convert(v) for v in item])
        return general(item)

    general = _general_converter(celtypes, key=key, convert=convert)
    return convert


def _map_key(text_type: Any) -> Callable[[Any], Any]:
    """Mapping keys as CEL strings, cached: keys repeat across objects and a StringType is immutable."""
    keys = _KEYS

    def key(k: Any) -> Any:
        if type(k) is not str:
            return text_type(k)
        cached = keys.get(k)
        if cached is None:
            cached = text_type(k)
            if len(keys) < _KEY_CACHE_SIZE:
                keys[k] = cached
        return cached

    return key


def _general_converter(celtypes: Any, *, key: Callable[[Any], Any], convert: Callable[[Any], Any]) -> Any:
    """``to_cel`` for what is not exactly a JSON type: subclasses, floats, tuples, big integers, the rest."""
    int_type, map_type, list_type = celtypes.IntType, celtypes.MapType, celtypes.ListType
    new_int = int.__new__
    low, high = -(2**63), 2**63

    def integer(item: Any) -> Any:
        return new_int(int_type, item) if low <= item < high else int_type(item)

    def mapping(item: Any) -> Any:
        made = map_type()
        dict.update(made, {key(k): convert(v) for k, v in item.items()})
        return made

    by_kind: tuple[tuple[Any, Callable[[Any], Any]], ...] = (
        (str, celtypes.StringType),
        (bool, celtypes.BoolType),
        (int, integer),
        (float, celtypes.DoubleType),
        (dict, mapping),
        (list | tuple, lambda item: list_type([convert(v) for v in item])),
    )

    def general(item: Any) -> Any:
        for kind, build in by_kind:
            if isinstance(item, kind):
                return build(item)
        from celpy.adapter import json_to_cel

        return json_to_cel(item)

    return general


class Builders(NamedTuple):
    """``to_cel``'s pieces for a caller that knows its data's shape (``HealthEvent.cel_value``).

    ``string``/``integer`` take a str / an int in the 64-bit range; ``key`` is a cached map key;
    ``mapping`` and ``array`` wrap already converted keys and values; ``convert`` is ``to_cel``.
    """

    string: Callable[[str], Any]
    integer: Callable[[int], Any]
    true: Any
    false: Any
    key: Callable[[str], Any]
    mapping: Callable[[dict[Any, Any]], Any]
    array: Callable[[list[Any]], Any]
    convert: Callable[[Any], Any]


_BUILDERS: Builders | None = None


def builders() -> Builders:
    global _BUILDERS  # noqa: PLW0603 - built on first use, like the environment
    if _BUILDERS is None:
        from celpy import celtypes

        text_type, int_type, map_type = celtypes.StringType, celtypes.IntType, celtypes.MapType
        new_str, new_int, new_dict = str.__new__, int.__new__, dict.__new__
        convert = _CONVERT if _CONVERT is not None else _converter()

        def mapping(items: dict[Any, Any]) -> Any:
            made = new_dict(map_type)
            dict.update(made, items)
            return made

        _BUILDERS = Builders(
            string=lambda item: new_str(text_type, item),
            integer=lambda item: new_int(int_type, item),
            true=convert(True),
            false=convert(False),
            key=lambda name: convert({name: None}).popitem()[0],
            mapping=mapping,
            array=celtypes.ListType,
            convert=convert,
        )
    return _BUILDERS


def to_cel(value: Any) -> Any:
    """Convert plain JSON-like data once, before evaluating any number of programs on it.

    A direct walk over the JSON types: celpy's ``json_to_cel`` dispatches through typing machinery
    and costs several times more, which dominated a rule evaluation (measured in bench_health).
    """
    global _CONVERT  # noqa: PLW0603 - built on first use, like the environment
    if _CONVERT is None:
        _CONVERT = _converter()
    return _CONVERT(value)


def _to_python(value: Any) -> Any:
    from celpy import celtypes

    if isinstance(value, celtypes.ListType):
        return [_to_python(v) for v in value]
    if isinstance(value, celtypes.MapType):
        return {_to_python(k): _to_python(v) for k, v in value.items()}
    return _scalar_to_python(value, celtypes)


def _scalar_to_python(value: Any, celtypes: Any) -> Any:
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, celtypes.IntType | celtypes.UintType):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    return value


# --- Rules over ``self``/``oldSelf``: a CustomResourceDefinition's x-kubernetes-validations -------
#
# These run in the API emulator, one program per rule compiled when the CRD is registered. They use
# celpy's interpreter (custom functions need no ``shared.cel`` indirection there) with the Kubernetes
# CEL library functions rules commonly call, and numeric comparisons across int and double as cel-go
# allows them. The interpreter is not thread-safe: parsing and every evaluation hold ``_RULE_LOCK``.

_RULE_ENVIRONMENT: Any = None
_RULE_LOCK = threading.RLock()


OptionalValue = cel_library.OptionalValue
"""``oldSelf`` under ``optionalOldSelf`` (defined beside the library functions that read it)."""


class RuleSyntaxError(Exception):
    """The rule does not parse; ``line``/``column`` are 1-based."""

    def __init__(self, message: str, *, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Timestamp:
    """A string a rule sees as a CEL timestamp (schema ``format: date-time`` or ``date``)."""

    text: str


@dataclass(frozen=True)
class Duration:
    """A string a rule sees as a CEL duration (schema ``format: duration``)."""

    text: str


def _rule_environment() -> Any:
    global _RULE_ENVIRONMENT  # noqa: PLW0603 - one parser per process, built on first use
    if _RULE_ENVIRONMENT is None:
        import celpy

        # celpy builds one parser per process, with the tree class of the first Environment; the
        # transpiler needs its TranspilerTree (a lark Tree the interpreter reads as well), so the
        # compiled environment comes first whichever kind of rule a process compiles first.
        _environment()
        _RULE_ENVIRONMENT = celpy.Environment(runner_class=celpy.InterpretedRunner)
    return _RULE_ENVIRONMENT


def parse_rule(expression: str) -> Any:
    """The parse tree (lark ``Tree``: ``.data``, ``.children``; tokens carry ``.type``/``.column``)."""
    from celpy.celparser import CELParseError

    try:
        with _RULE_LOCK:
            return _rule_environment().compile(expression)
    except CELParseError as exc:
        line, column = getattr(exc, "line", None) or 1, getattr(exc, "column", None) or 1
        raise RuleSyntaxError(str(exc.args[0]) if exc.args else "syntax error", line=line, column=column) from None


@dataclass(frozen=True)
class RuleProgram:
    """A parsed rule bound to the Kubernetes function library; evaluate under the rule lock."""

    expression: str
    runner: Any

    def evaluate(self, variables: Mapping[str, Any]) -> Any:
        """The result as a Python value (``OptionalValue`` stays as is); EvaluationError with cel-go's wording."""
        from celpy.evaluation import CELEvalError

        with _RULE_LOCK:
            try:
                activation = {name: _rule_value(value) for name, value in variables.items()}
                result = self.runner.evaluate(activation)
            except CELEvalError as exc:
                raise EvaluationError(_rule_error(exc)) from None
            except (TypeError, ValueError, KeyError, AttributeError, IndexError, ZeroDivisionError) as exc:
                raise EvaluationError(_rule_error(exc)) from None
        if isinstance(result, CELEvalError):
            raise EvaluationError(_rule_error(result))
        return result if isinstance(result, OptionalValue) else _to_python(result)


def compile_rule(expression: str) -> RuleProgram:
    """Bind ``expression`` to the rule functions; RuleSyntaxError when it does not parse."""
    with _RULE_LOCK:
        return RuleProgram(expression, _rule_environment().program(parse_rule(expression), functions=_rule_functions()))


RULE_FUNCTIONS = frozenset(
    {
        "isSorted", "sum", "min", "max", "indexOf", "lastIndexOf", "charAt", "lowerAscii", "upperAscii",
        "replace", "split", "substring", "trim", "join", "reverse", "find", "findAll", "hasValue", "value",
        "orValue",
    }
)  # fmt: skip
"""The Kubernetes CEL library functions ``compile_rule`` programs can call, besides celpy's own."""


def _rule_error(exc: BaseException) -> str:
    """cel-go's text for the common runtime failures (no such key, index out of bounds, ...)."""
    kind, texts = _error_chain(exc)
    text = " ".join(texts) or str(exc)
    if kind is KeyError or "no such member" in text or "no such key" in text:
        key = text.split("'")[1] if text.count("'") >= 2 else (texts[-1] if texts else "")
        return f"no such key: {key}"
    if kind is ZeroDivisionError:
        return "modulus by zero" if "modul" in texts[0] and "divide" not in texts[0] else "division by zero"
    wording = {IndexError: "index out of bounds", TypeError: "no such overload"}.get(kind)
    if wording is None and "overload" in text:
        wording = "no such overload"
    return wording or (texts[0] if texts else str(exc))


def _error_chain(exc: BaseException) -> tuple[Any, list[str]]:
    """(the innermost exception type named, every message) through celpy's (message, type, args) nesting."""
    args: Any = exc.args
    kind: Any = None
    texts: list[str] = []
    while True:
        if args:
            texts.append(str(args[0]))
        if kind is None and len(args) >= 2 and isinstance(args[1], type):
            kind = args[1]
        if len(args) >= 3 and isinstance(args[2], tuple) and args[2]:
            args = args[2]
            continue
        break
    return kind or type(exc), texts


def _rule_value(value: Any) -> Any:
    from celpy import celtypes

    if isinstance(value, Timestamp | Duration):
        return _time_value(value)
    if isinstance(value, OptionalValue):
        return OptionalValue(_rule_value(value.value), value.present) if value.present else value
    if isinstance(value, dict):
        mapping = celtypes.MapType()
        dict.update(mapping, {celtypes.StringType(k): _rule_value(v) for k, v in value.items()})
        return mapping
    if isinstance(value, list):
        return celtypes.ListType([_rule_value(v) for v in value])
    if isinstance(value, float):
        return celtypes.DoubleType(value)
    return to_cel(value)


def _time_value(value: Timestamp | Duration) -> Any:
    from celpy import celtypes

    try:
        return celtypes.TimestampType(value.text) if isinstance(value, Timestamp) else celtypes.DurationType(value.text)
    except ValueError:
        return celtypes.StringType(value.text)  # a form celpy cannot parse stays a string


_RULE_FUNCTION_TABLE: dict[str, Callable[..., Any]] | None = None


def _rule_functions() -> dict[str, Callable[..., Any]]:
    global _RULE_FUNCTION_TABLE  # noqa: PLW0603 - built on first use, like the environment
    if _RULE_FUNCTION_TABLE is None:
        _RULE_FUNCTION_TABLE = _build_rule_functions()
    return _RULE_FUNCTION_TABLE


def _build_rule_functions() -> dict[str, Callable[..., Any]]:
    table: dict[str, Callable[..., Any]] = {
        "_<_": _numeric(lambda a, b: a < b, "_<_"),
        "_<=_": _numeric(lambda a, b: a <= b, "_<=_"),
        "_>_": _numeric(lambda a, b: a > b, "_>_"),
        "_>=_": _numeric(lambda a, b: a >= b, "_>=_"),
        "_==_": _numeric(lambda a, b: a == b, "_==_"),
        "_!=_": _numeric(lambda a, b: a != b, "_!=_"),
    }
    table.update({name: _bound(function) for name, function in cel_library.FUNCTIONS.items()})
    table.update({name: f for name, f in _STRING_EXTENSIONS.items() if name != "indexOf"})
    return table


def _numeric(compare: Callable[[Any, Any], bool], name: str) -> Callable[[Any, Any], Any]:
    """celpy's operator ``name``, but comparing int with double by value as cel-go does."""
    from celpy import celtypes
    from celpy.evaluation import CELEvalError, base_functions

    numbers = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)
    fallback = base_functions[name]

    def op(a: Any, b: Any) -> Any:
        if isinstance(a, CELEvalError) or isinstance(b, CELEvalError):
            return a if isinstance(a, CELEvalError) else b
        if isinstance(a, numbers) and isinstance(b, numbers) and type(a) is not type(b):
            return celtypes.BoolType(compare(float(a), float(b)))
        try:
            result = fallback(a, b)
        except TypeError as exc:
            result = CELEvalError("no such overload", TypeError, exc.args)
        if isinstance(result, CELEvalError) and name in ("_==_", "_!=_"):
            return celtypes.BoolType(name == "_!=_")  # heterogeneous equality: other types are unequal
        return result

    return op


def _bound(function: Callable[..., Any]) -> Callable[..., Any]:
    """A ``cel_library`` function as celpy calls it: plain results made CEL values, a refusal an evaluation error."""
    from celpy.evaluation import CELEvalError

    def call(*args: Any) -> Any:
        try:
            return _as_cel(function(*args))
        except cel_library.LibraryError as exc:
            message = str(exc)
            return CELEvalError(message, ValueError, (message,))

    return call


def _as_cel(result: Any) -> Any:
    """A plain ``bool``/``int``/``str``/``list`` as its CEL value; a CEL value (a subclass) as it is."""
    from celpy import celtypes

    kind = type(result)
    if kind is bool:
        return celtypes.BoolType(result)
    if kind is int:
        return celtypes.IntType(result)
    if kind is str:
        return celtypes.StringType(result)
    if kind is list:
        return celtypes.ListType([_as_cel(item) for item in result])
    return result
