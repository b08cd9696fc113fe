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
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from shared import errors

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

    text_type, bool_type, int_type, map_type, list_type = (
        celtypes.StringType,
        celtypes.BoolType,
        celtypes.IntType,
        celtypes.MapType,
        celtypes.ListType,
    )
    new_str, new_int, new_dict = str.__new__, int.__new__, dict.__new__
    true, false = bool_type(True), bool_type(False)  # immutable: one instance each serves every value
    keys = _KEYS
    low, high = -(2**63), 2**63

    def key(k: Any) -> Any:
        if type(k) is not str:
            return text_type(k)
        cached = keys.get(k)
        if cached is None:
            cached = text_type(k)
            if len(keys) < _KEY_CACHE_SIZE:
                keys[k] = cached  # mapping keys repeat across objects; a StringType is immutable
        return cached

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
        if kind is bool:
            return true if item else false
        if item is None:
            return None
        if kind is int and low <= item < high:  # IntType's own constructor re-checks this, slowly
            return new_int(int_type, item)
        if kind is list:
            return list_type([convert(v) for v in item])
        return general(item)

    def general(item: Any) -> Any:
        if isinstance(item, str):
            return text_type(item)
        if isinstance(item, bool):
            return bool_type(item)
        if isinstance(item, int):
            if low <= item < high:
                return new_int(int_type, item)
            return int_type(item)
        if isinstance(item, float):
            return celtypes.DoubleType(item)
        if isinstance(item, dict):
            mapping = map_type()
            dict.update(mapping, {key(k): convert(v) for k, v in item.items()})
            return mapping
        if isinstance(item, list | tuple):
            return list_type([convert(v) for v in item])
        from celpy.adapter import json_to_cel

        return json_to_cel(item)

    return convert


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

    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, celtypes.IntType | celtypes.UintType):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, celtypes.ListType):
        return [_to_python(v) for v in value]
    if isinstance(value, celtypes.MapType):
        return {_to_python(k): _to_python(v) for k, v in value.items()}
    return value
