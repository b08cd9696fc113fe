"""CEL expressions: the only module that imports celpy.

Every expression is compiled when its configuration loads, so a typo fails the load with the rule's
name, the expression and the position, never later on a live event. One Environment per process
(the first costs ~80 ms to build its parser); programs are kept and reused.

celpy's CompiledRunner transpiles an expression to Python once and runs about five times faster
than its interpreter (research/python-stack.md §2), which the fault-quarantine throughput needs.
It is not thread-safe (it parks the activation in module globals), so every evaluation holds one
process-wide lock: controllers evaluate on one thread anyway, and the lock keeps a stray second
caller correct instead of silently wrong. The cel-go ``ext.Strings()`` functions upstream rules use
are module-level functions here, because transpiled code calls them as ``shared.cel.<name>``.
Callers convert each input once with ``to_cel`` and reuse it for every program.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True)
class Program:
    """A compiled expression, ready to evaluate many times."""

    name: str
    expression: str
    runner: Any

    def evaluate(self, activation: Mapping[str, Any]) -> Any:
        """The result as a Python value; EvaluationError when the input does not fit the expression."""
        from celpy.evaluation import CELEvalError

        try:
            with _EVAL_LOCK:
                result = self.runner.evaluate(dict(activation))
        except CELEvalError as exc:
            raise EvaluationError(_eval_message(exc)) from None
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise EvaluationError(f"{type(exc).__name__}: {exc}") from None
        if isinstance(result, CELEvalError):
            raise EvaluationError(_eval_message(result))
        return _to_python(result)

    def evaluate_bool(self, activation: Mapping[str, Any]) -> bool:
        result = self.evaluate(activation)
        if not isinstance(result, bool):
            raise EvaluationError(f"rule {self.name!r} returned {type(result).__name__}, not a boolean")
        return result


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
        raise errors.InvalidInput(f"rule {name!r}: invalid CEL{position}: {expression!r}",
                                  where=where) from None
    except (SyntaxError, ValueError, TypeError) as exc:   # the transpiler refuses a construct
        raise errors.InvalidInput(f"rule {name!r}: unsupported CEL ({exc}): {expression!r}", where=where) from None
    return Program(name=name, expression=expression, runner=runner)


def to_cel(value: Any) -> Any:
    """Convert plain JSON-like data once, before evaluating any number of programs on it.

    A direct walk over the JSON types: celpy's ``json_to_cel`` dispatches through typing machinery
    and costs several times more, which dominated a rule evaluation (measured in bench_health).
    """
    from celpy import celtypes

    def convert(item: Any) -> Any:
        if isinstance(item, str):
            return celtypes.StringType(item)
        if isinstance(item, bool):
            return celtypes.BoolType(item)
        if isinstance(item, int):
            if -(2**63) <= item < 2**63:   # IntType's own constructor re-checks this through a slow decorator
                return int.__new__(celtypes.IntType, item)
            return celtypes.IntType(item)
        if isinstance(item, float):
            return celtypes.DoubleType(item)
        if item is None:
            return None
        if isinstance(item, dict):
            mapping = celtypes.MapType()
            # dict.update skips MapType.__init__'s isinstance checks against typing ABCs (slow).
            dict.update(mapping, {celtypes.StringType(k): convert(v) for k, v in item.items()})
            return mapping
        if isinstance(item, list | tuple):
            return celtypes.ListType([convert(v) for v in item])
        from celpy.adapter import json_to_cel

        return json_to_cel(item)

    return convert(value)


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
