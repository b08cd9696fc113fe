"""A type checker for fault-quarantine rules, over the parse tree celpy produces.

celpy checks nothing before it runs: a rule that calls an unknown function, reads a field the
event lacks, or compares an enum (a number in CEL) with its name fails or is false at every
evaluation, and the rule engine counts it false. This walks the lark tree ``shared.cel.parse_rule``
returns, gives every node a type from ``shared.health.ruletypes`` and reports what cannot work:

* unknown variables, fields, functions; a call with the wrong number or types of arguments;
* ``==``/``!=``/``in`` between values of different kinds (celpy raises "no such overload" or answers
  false: never a match), with a hint when a string names an enum member;
* ordering and arithmetic across kinds, ``&&``/``||``/``!``/``?:`` on non-booleans, indexing what
  cannot be indexed, a rule whose value is not a boolean;
* what celpy in particular refuses: a number compared with ``null``, ``!=`` between a list or a map
  and ``null``, an int on the left of a double or uint (tests/health/test_rule_types.py holds the
  checker to celpy operator by operator).

``dyn`` (an unknown type: a map's value of unknown shape, ``dyn(x)``) is accepted everywhere, so
what the checker cannot know it does not refuse. Each problem has its 1-based line and column in
the expression.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from shared import cel
from shared.health import ruletypes as t


@dataclass(frozen=True)
class TypeProblem:
    line: int
    column: int
    message: str


class _Found(Exception):
    """Stops checking a sub-expression after its first problem (one cause, not a cascade); the
    operands of ``&&`` and ``||`` are checked each on its own."""


def check(kind: str, expression: str) -> list[TypeProblem]:
    """Every problem in ``expression`` for a rule of ``kind`` (``HealthEvent`` or ``Node``).

    A syntax error raises ``shared.cel.RuleSyntaxError``; ``rulecheck`` reports those from
    ``cel.compile`` first.
    """
    tree = cel.parse_rule(expression)
    variable, kind_type = t.VARIABLES[kind]
    checker = _Checker(expression, kind, {variable: kind_type})
    try:
        result = checker.type_of(tree, checker.scope)
        if result.kind not in ("bool", "dyn"):
            checker.report(tree, f"the rule's value is {_a(result)}, not a boolean: it never matches")
    except _Found:
        pass
    return checker.problems


def _a(kind: t.CelType) -> str:
    text = kind.describe()
    return f"an {text}" if text[0] in "aeiou" else f"a {text}"


def _children(node: Any) -> list[Any]:
    return list(getattr(node, "children", []))


def _is_tree(node: Any) -> bool:
    return hasattr(node, "data")


def _token_type(node: Any) -> str:
    return str(getattr(node, "type", ""))


_ORDERED = frozenset({"int", "uint", "double", "string", "bool", "bytes", "timestamp", "duration"})
_RELATIONS = {
    "relation_lt": "<",
    "relation_le": "<=",
    "relation_gt": ">",
    "relation_ge": ">=",
    "relation_eq": "==",
    "relation_ne": "!=",
    "relation_in": "in",
}
_ARITHMETIC = {
    "addition_add": "+",
    "addition_sub": "-",
    "multiplication_mul": "*",
    "multiplication_div": "/",
    "multiplication_mod": "%",
}
_LITERALS = {
    "INT_LIT": t.INT,
    "UINT_LIT": t.UINT,
    "FLOAT_LIT": t.DOUBLE,
    "STRING_LIT": t.STRING,
    "MLSTRING_LIT": t.STRING,
    "BYTES_LIT": t.BYTES,
    "BOOL_LIT": t.BOOL,
    "NULL_LIT": t.NULL,
}
_NUMBERS = frozenset({"int", "uint", "double"})


def _lenient(a: t.CelType, b: t.CelType) -> bool:
    """celpy orders a double or uint on the left with any number on the right (Python's operators),
    but refuses an int on the left with a double or uint ("no such overload")."""
    return a.kind in ("double", "uint") and b.kind in _NUMBERS


_MIXED_NUMBERS = {("double", "int"): "+-*", ("double", "uint"): "+-*", ("uint", "int"): "+-*/%"}
"""The arithmetic celpy does across number kinds (left, right) → operators; anything else fails."""


def _same_kind(a: t.CelType, b: t.CelType) -> bool:
    """Values of these types can be equal at run time (``null`` compares with anything: unset fields)."""
    return "dyn" in (a.kind, b.kind) or "null" in (a.kind, b.kind) or a.kind == b.kind


def _null_problem(a: t.CelType, b: t.CelType, op: str) -> str | None:
    """What celpy refuses against ``null``: any comparison with a number (an enum too), and ``!=``
    with a list or a map (``==`` works); "no such overload" at run time, whatever the value."""
    if "null" not in (a.kind, b.kind) or "dyn" in (a.kind, b.kind):
        return None
    other = b if a.kind == "null" else a
    if other.kind in _NUMBERS:
        return f"celpy cannot compare {_a(other)} with null (no such overload at run time)"
    if other.kind in ("list", "map") and op == "!=":
        return f"celpy cannot compare {_a(other)} with null by != (no such overload at run time); write !(x == null)"
    return None


class _Checker:
    def __init__(self, expression: str, kind: str, scope: Mapping[str, t.CelType]) -> None:
        self.expression = expression
        self.kind = kind
        self.scope = dict(scope)
        self.problems: list[TypeProblem] = []

    # --- reporting --------------------------------------------------------------------------

    def report(self, node: Any, message: str, *, offset: int | None = None) -> None:
        """Record ``message`` at ``node`` (or at ``offset`` in the expression) and stop this branch."""
        self.problems.append(TypeProblem(*self._position(node, offset), message))
        raise _Found

    def _position(self, node: Any, offset: int | None) -> tuple[int, int]:
        if offset is None:
            meta = getattr(node, "meta", None)
            if getattr(meta, "line", None) is not None and getattr(meta, "column", None) is not None:
                return int(meta.line), int(meta.column)  # type: ignore[union-attr]
            token = _first_token(node)  # lark leaves meta empty on some rules: their first token's place
            return (int(token.line), int(token.column)) if token is not None else (1, 1)
        before = self.expression[:offset]
        return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1

    def text(self, node: Any) -> str:
        """The source of ``node``, on one line (for messages)."""
        meta = getattr(node, "meta", None)
        start, end = getattr(meta, "start_pos", None), getattr(meta, "end_pos", None)
        if start is not None and end is not None:
            return " ".join(self.expression[start:end].split())
        token = _first_token(node)
        return str(token) if token is not None else "the expression"

    # --- the walk ---------------------------------------------------------------------------

    def type_of(self, node: Any, scope: Mapping[str, t.CelType]) -> t.CelType:
        if not _is_tree(node):
            return _LITERALS.get(_token_type(node), t.DYN)
        rule = str(node.data)
        kids = _children(node)
        handler = getattr(self, f"_{rule}", None)
        if handler is not None:
            result: t.CelType = handler(node, kids, scope)
            return result
        if len(kids) == 1:  # expr, conditionalor, relation, ... with no operator: a pass-through
            return self.type_of(kids[0], scope)
        return t.DYN  # pragma: no cover - every rule of the grammar with children is handled above

    def _expr(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        if len(kids) == 1:
            return self.type_of(kids[0], scope)
        condition, yes, no = kids
        self._expect_bool(condition, scope, "the condition of ?:")
        a, b = self.type_of(yes, scope), self.type_of(no, scope)
        return a if a == b else t.DYN

    def _conditionalor(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        return self._logic(kids, scope, "||")

    def _conditionaland(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        return self._logic(kids, scope, "&&")

    def _logic(self, kids: list[Any], scope: Mapping[str, t.CelType], op: str) -> t.CelType:
        if len(kids) == 1:
            return self.type_of(kids[0], scope)
        for kid in kids:  # each operand on its own: a problem in one does not hide the next one's
            if kid is None:
                continue
            try:
                self._expect_bool(kid, scope, f"an operand of {op}")
            except _Found:
                continue
        return t.BOOL

    def _expect_bool(self, node: Any, scope: Mapping[str, t.CelType], role: str) -> None:
        found = self.type_of(node, scope)
        if found.kind not in ("bool", "dyn"):
            self.report(node, f"{role} is {_a(found)}, not a boolean: {self.text(node)}")

    def _relation(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        if len(kids) == 1:
            return self.type_of(kids[0], scope)
        operator_node, right = kids
        op = _RELATIONS[str(operator_node.data)]
        (left,) = _children(operator_node)
        a, b = self.type_of(left, scope), self.type_of(right, scope)
        at = _operator_offset(operator_node, len(op))
        if op == "in":
            self._membership(left, right, a, b, at)
        elif op in ("==", "!="):
            null = _null_problem(a, b, op)
            if null is not None:
                self.report(left, f"{self.text(left)} {op} {self.text(right)}: {null}", offset=at)
            if not _same_kind(a, b):
                self._never_equal(left, right, a, b, op, at)
            self._enum_number(left, right, a, b, op, at)
        elif not ("dyn" in (a.kind, b.kind) or (a.kind == b.kind and a.kind in _ORDERED) or _lenient(a, b)):
            message = f"{a.describe()} {op} {b.describe()} is an error at run time: {self.text(node)}"
            self.report(node, message, offset=at)
        return t.BOOL

    def _never_equal(self, left: Any, right: Any, a: t.CelType, b: t.CelType, op: str, at: int | None) -> None:
        outcome = "never true" if op == "==" else "always true"
        for enum, other_node, other in ((a, right, b), (b, left, a)):
            if isinstance(enum, t.EnumType) and other.kind == "string":
                name = _string_value(other_node)
                hint = (
                    f"; {name} is {enum.members[name]}"
                    if name is not None and name in enum.members
                    else f"; its values: {', '.join(f'{k}={v}' for k, v in enum.members.items())}"
                )
                self.report(
                    left,
                    f"{self.text(left)} {op} {self.text(right)} is {outcome}: {enum.name} is a number in CEL{hint}",
                    offset=at,
                )
        self.report(
            left,
            f"{self.text(left)} {op} {self.text(right)} compares {_a(a)} with {_a(b)}: {outcome}",
            offset=at,
        )

    def _enum_number(self, left: Any, right: Any, a: t.CelType, b: t.CelType, op: str, at: int | None) -> None:
        """An enum compared with a number none of its members has: never equal."""
        for enum, other_node in ((a, right), (b, left)):
            if isinstance(enum, t.EnumType):
                self._enum_member(left, right, enum, other_node, op, at)

    def _enum_member(self, left: Any, right: Any, enum: t.EnumType, number_node: Any, op: str, at: int | None) -> None:
        number = _int_value(number_node)
        if number is not None and number not in enum.members.values():
            values = ", ".join(f"{k}={v}" for k, v in enum.members.items())
            self.report(
                left,
                f"{self.text(left)} {op} {self.text(right)}: {enum.name} has no value {number} ({values})",
                offset=at,
            )

    def _membership(self, left: Any, right: Any, a: t.CelType, b: t.CelType, at: int | None) -> None:
        if b.kind == "dyn":
            return
        if isinstance(b, t.ListType):
            wanted = b.element
        elif isinstance(b, t.MapType):
            wanted = b.key
        elif isinstance(b, t.ObjectType):
            wanted = t.STRING
        else:
            self.report(right, f"'in' needs a list or a map, not {_a(b)}: {self.text(right)}", offset=at)
            return
        listed = _unwrap(right)
        if isinstance(a, t.EnumType) and listed is not None and str(listed.data) == "list_lit":
            for item in _exprs(_children(listed)):
                self._enum_member(left, right, a, item, "in", at)
        if not _same_kind(a, wanted):
            self.report(
                left,
                f"{self.text(left)} in {self.text(right)} looks for {_a(a)} among {wanted.describe()} values:"
                " never true",
                offset=at,
            )

    def _addition(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        return self._arithmetic(node, kids, scope)

    def _multiplication(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        return self._arithmetic(node, kids, scope)

    def _arithmetic(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        if len(kids) == 1:
            return self.type_of(kids[0], scope)
        operator_node, right = kids
        op = _ARITHMETIC[str(operator_node.data)]
        (left,) = _children(operator_node)
        a, b = self.type_of(left, scope), self.type_of(right, scope)
        result = _arithmetic_result(op, a, b)
        if result is None:
            self.report(
                node,
                f"{a.describe()} {op} {b.describe()} is an error at run time: {self.text(node)}",
                offset=_operator_offset(operator_node, 1),
            )
            return t.DYN
        return result

    def _unary(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        if len(kids) == 1:
            return self.type_of(kids[0], scope)
        operator_node, operand = kids
        found = self.type_of(operand, scope)
        if str(operator_node.data) == "unary_not":
            if found.kind not in ("bool", "dyn"):
                self.report(node, f"! needs a boolean, not {_a(found)}: {self.text(node)}")
            return t.BOOL
        if found.kind not in ("int", "double", "duration", "dyn"):
            self.report(node, f"unary - needs a number, not {_a(found)}: {self.text(node)}")
        return found

    def _member_dot(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        target, name = kids
        return self._select(name, target, self.type_of(target, scope), str(name))

    def _select(self, node: Any, target: Any, of: t.CelType, name: str) -> t.CelType:
        if isinstance(of, t.ObjectType):
            if name in of.fields:
                return of.fields[name]
            close = difflib.get_close_matches(name, list(of.fields), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"it has: {', '.join(sorted(of.fields))}"
            self.report(node, f"{of.name} has no field {name!r} ({hint})")
        if isinstance(of, t.MapType):
            if not _same_kind(of.key, t.STRING):
                self.report(node, f"{self.text(target)} has {of.key.describe()} keys: .{name} never finds one")
            return of.value
        if of.kind == "dyn":
            return t.DYN
        self.report(node, f"{self.text(target)} is {_a(of)}: it has no field {name!r}")
        return t.DYN

    def _member_index(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        target, index = kids
        of, key = self.type_of(target, scope), self.type_of(index, scope)
        if isinstance(of, t.ListType):
            if key.kind not in ("int", "uint", "dyn"):
                self.report(index, f"a list index must be an int, not {_a(key)}: {self.text(node)}")
            return of.element
        if isinstance(of, t.MapType):
            if not _same_kind(key, of.key):
                self.report(index, f"{self.text(target)} has {of.key.describe()} keys, not {key.describe()}")
            return of.value
        if isinstance(of, t.ObjectType):
            literal = _string_value(index)
            if literal is not None:
                return self._select(node, target, of, literal)
            if not _same_kind(key, t.STRING):
                self.report(index, f"{of.name}'s fields are named by strings, not {_a(key)}: {self.text(node)}")
            return t.DYN
        if of.kind == "dyn":
            return t.DYN
        self.report(node, f"{self.text(target)} is {_a(of)}: it cannot be indexed")
        return t.DYN

    def _member_object(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        self.report(node, f"message construction is not available to rules: {self.text(node)}")
        return t.DYN

    def _primary(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        return self.type_of(kids[0], scope)

    def _member(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        return self.type_of(kids[0], scope)

    def _literal(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        return _LITERALS.get(_token_type(kids[0]), t.DYN)

    def _paren_expr(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        return self.type_of(kids[0], scope)

    def _ident(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        name = str(kids[0])
        if name in scope:
            return scope[name]
        if name in t.TYPE_NAMES:
            return t.TYPE
        others = [v for k, (v, _) in t.VARIABLES.items() if k != self.kind]
        own = t.VARIABLES[self.kind][0]
        if name in others:
            self.report(node, f"a {self.kind} rule has no variable {name!r} (only {own!r})")
        self.report(node, f"unknown variable {name!r} (a {self.kind} rule sees {own!r})")
        return t.DYN

    def _dot_ident(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        self.report(node, f"unknown variable {'.' + str(kids[0])!r}")
        return t.DYN

    def _list_lit(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        items = [self.type_of(k, scope) for k in _exprs(kids)]
        kinds = {i for i in items if i.kind not in ("dyn", "null")}
        return t.list_of(kinds.pop() if len(kinds) == 1 else t.DYN)

    def _map_lit(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        entries = _exprs(kids)
        keys = {self.type_of(k, scope) for k in entries[0::2]}
        values = {self.type_of(v, scope) for v in entries[1::2]}
        return t.map_of(keys.pop() if len(keys) == 1 else t.DYN, values.pop() if len(values) == 1 else t.DYN)

    # --- calls ------------------------------------------------------------------------------

    def _ident_arg(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        name, args = str(kids[0]), _exprs(kids[1:])
        if name == "has":
            return self._has(node, args, scope)
        return self._call(node, name, args, [self.type_of(a, scope) for a in args])

    def _dot_ident_arg(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        name, args = str(kids[0]), _exprs(kids[1:])
        return self._call(node, name, args, [self.type_of(a, scope) for a in args])

    def _member_dot_arg(self, node: Any, kids: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        target, name, args = kids[0], str(kids[1]), _exprs(kids[2:])
        of = self.type_of(target, scope)
        if name in t.MACROS:
            return self._macro(node, name, target, of, args, scope)
        return self._call(node, name, [target, *args], [of, *(self.type_of(a, scope) for a in args)])

    def _call(self, node: Any, name: str, args: list[Any], types: list[t.CelType]) -> t.CelType:
        overloads = t.FUNCTIONS.get(name)
        if overloads is None:
            self.report(node, f"unknown function {name!r}: {self.text(node)}")
            return t.DYN
        fitting = [o for o in overloads if len(o.params) == len(types)]
        if not fitting:
            counts = " or ".join(sorted({str(len(o.params)) for o in overloads}))
            self.report(node, f"{name} takes {counts} argument(s) (receiver included), got {len(types)}")
        for overload in fitting:
            if all(_fits(param, found) for param, found in zip(overload.params, types, strict=True)):
                return overload.result
        given = ", ".join(a.describe() for a in types)
        wanted = " or ".join(f"({', '.join(o.params)})" for o in fitting)
        self.report(node, f"{name}({given}) has no overload; it takes {wanted}: {self.text(node)}")
        return t.DYN

    def _has(self, node: Any, args: list[Any], scope: Mapping[str, t.CelType]) -> t.CelType:
        selection = _unwrap(args[0]) if len(args) == 1 else None
        if selection is None or str(selection.data) != "member_dot":
            self.report(node, f"has() takes one field selection (has(x.field)): {self.text(node)}")
            return t.BOOL
        target, name = _children(selection)
        of = self.type_of(target, scope)
        if isinstance(of, t.ObjectType) and str(name) not in of.fields:
            self._select(name, target, of, str(name))
        if of.kind not in ("map", "dyn"):
            self.report(node, f"has() needs a map or message, {self.text(target)} is {_a(of)}")
        return t.BOOL

    def _macro(
        self, node: Any, name: str, target: Any, of: t.CelType, args: list[Any], scope: Mapping[str, t.CelType]
    ) -> t.CelType:
        variable = _unwrap(args[0]) if len(args) == 2 else None
        if variable is None or str(variable.data) != "ident":
            self.report(node, f"{name} takes a variable and an expression: x.{name}(v, predicate)")
            return t.DYN
        if isinstance(of, t.ListType):
            element: t.CelType = of.element
        elif isinstance(of, t.MapType):
            element = of.key
        elif isinstance(of, t.ObjectType):
            element = t.STRING
        elif of.kind == "dyn":
            element = t.DYN
        else:
            self.report(node, f"{name} needs a list or a map, {self.text(target)} is {_a(of)}")
            return t.DYN
        inner = {**scope, str(_children(variable)[0]): element}
        if name == "map":
            return t.list_of(self.type_of(args[1], inner))
        self._expect_bool(args[1], inner, f"the predicate of {name}")
        if name == "filter":
            return of if isinstance(of, t.ListType) else t.list_of(element)
        return t.BOOL


def _operator_offset(operator_node: Any, width: int) -> int | None:
    """Where a binary operator is: its rule (``relation_eq``, ...) ends with it; None if unknown."""
    end = getattr(getattr(operator_node, "meta", None), "end_pos", None)
    return None if end is None else int(end) - width


def _first_token(node: Any) -> Any:
    """The first token (with a place) under ``node``, or None."""
    if not _is_tree(node):
        return node if getattr(node, "line", None) is not None else None
    for kid in _children(node):
        found = _first_token(kid)
        if found is not None:
            return found
    return None


def _exprs(kids: list[Any]) -> list[Any]:
    """The expressions of an ``exprlist``/``mapinits`` child, or [] when there are none."""
    found: list[Any] = []
    for kid in kids:
        if kid is None:
            continue
        if _is_tree(kid) and str(kid.data) in ("exprlist", "mapinits"):
            found.extend(_children(kid))
        else:
            found.append(kid)
    return found


def _descend(node: Any) -> Iterator[Any]:
    while _is_tree(node):
        yield node
        kids = _children(node)
        if len(kids) != 1:
            return
        node = kids[0]


_PASS_THROUGH = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member", "primary"}
)


def _unwrap(node: Any) -> Any:
    """The innermost tree of a chain of pass-through rules (``expr`` → ... → ``member_dot``)."""
    last = None
    for last in _descend(node):
        if str(last.data) not in _PASS_THROUGH:
            return last
    return last


def _int_value(node: Any) -> int | None:
    """The value of a plain int literal (``-`` included), else None."""
    inner = _unwrap(node)
    if inner is None or str(inner.data) != "literal":
        return None
    token = _children(inner)[0]
    if _token_type(token) != "INT_LIT":
        return None
    text = str(token)
    return int(text, 16) if "x" in text.lower() else int(text, 10)


def _string_value(node: Any) -> str | None:
    """The value of a plain string literal (no escapes), else None."""
    inner = _unwrap(node)
    if inner is None or str(inner.data) != "literal":
        return None
    token = _children(inner)[0]
    if _token_type(token) != "STRING_LIT":
        return None
    text = str(token)
    if text[:1] in "rR":
        text = text[1:]
    body = text[1:-1]
    return None if "\\" in body else body


def _fits(param: t.Param, found: t.CelType) -> bool:
    if found.kind == "dyn" or param == "any":
        return True
    return found.kind in param.split("|")


_MIXED: dict[tuple[str, str, str], t.CelType] = {
    ("+", "string", "string"): t.STRING,
    ("+", "bytes", "bytes"): t.BYTES,
    ("+", "timestamp", "duration"): t.TIMESTAMP,
    ("+", "duration", "timestamp"): t.TIMESTAMP,
    ("+", "duration", "duration"): t.DURATION,
    ("-", "timestamp", "timestamp"): t.DURATION,
    ("-", "timestamp", "duration"): t.TIMESTAMP,
    ("-", "duration", "duration"): t.DURATION,
}
"""What else celpy's arithmetic accepts besides two numbers of one kind and list + list."""


def _arithmetic_result(op: str, a: t.CelType, b: t.CelType) -> t.CelType | None:
    """The type of ``a op b``, or None when celpy refuses it."""
    if "dyn" in (a.kind, b.kind):
        return t.DYN
    pair = (a.kind, b.kind)
    if a.kind == b.kind and a.kind in _NUMBERS and not (op == "%" and a.kind == "double"):
        return t.prim(a.kind)
    if op in _MIXED_NUMBERS.get(pair, ""):
        return t.prim(a.kind)
    if op == "+" and isinstance(a, t.ListType) and isinstance(b, t.ListType):
        return a if a == b else t.list_of(t.DYN)
    return _MIXED.get((op, a.kind, b.kind))
