"""``x-kubernetes-validations``: CEL rules of a CRD schema, compiled when the CRD is registered.

Compilation (at CRD create/update) refuses what cel-go would: syntax errors, undeclared names, fields
the schema does not declare (a light check of ``self.a.b`` chains; cel-go type-checks everything),
``oldSelf`` where old and new values cannot be correlated, ``optionalOldSelf`` on a rule without
``oldSelf`` (apiextensions-apiserver:pkg/apis/apiextensions/validation/validation.go, cel/compilation.go).
It also refuses rules this server cannot evaluate (functions of the Kubernetes CEL library it does not
implement, optional ``.?`` syntax), naming the rule, so a rule never passes silently. ``crdruleeval``
runs the compiled rules. Cost budgets (per rule, per CRD, per request) are not modelled: no rule is
ever refused or cut short for its cost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shared import cel
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.schemanode import Node

REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_GLOBALS = frozenset(
    {"size", "int", "uint", "double", "string", "bytes", "bool", "duration", "timestamp", "type", "dyn", "matches"}
)
_METHODS = frozenset(
    {
        "size", "contains", "startsWith", "endsWith", "matches", "getDate", "getDayOfMonth", "getDayOfWeek",
        "getDayOfYear", "getFullYear", "getMonth", "getHours", "getMilliseconds", "getMinutes", "getSeconds",
    }
)  # fmt: skip
_TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"})
# Functions and namespaces of the Kubernetes CEL environment this server does not evaluate.
_NOT_HERE = frozenset(
    {
        "url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery", "quantity",
        "isQuantity", "sign", "isInteger", "asInteger", "asApproximateFloat", "add", "sub", "compareTo",
        "isLessThan", "isGreaterThan", "ip", "isIP", "cidr", "isCIDR", "family", "isUnspecified", "isLoopback",
        "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "containsIP", "containsCIDR", "masked",
        "prefixLength", "format", "quote", "semver", "isSemver", "major", "minor", "patch", "optMap", "optFlatMap",
        "or", "flatten", "distinct", "slice", "sort", "sortBy", "first", "last", "transformList", "transformMap",
        "transformMapEntry", "authorizer", "lowerBound",
    }
)  # fmt: skip
_NAMESPACES = frozenset({"optional", "sets", "math", "strings", "base64", "lists", "cel", "ext", "semver"})
_PASS = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member", "primary"}
)
_RESERVED = frozenset(
    {
        "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
        "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
    }
)  # fmt: skip
_IDENT = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*\Z")


def escape(name: str) -> str | None:
    """A property name as CEL spells it (``foo-bar`` is ``foo__dash__bar``), None if it cannot be."""
    if name in _RESERVED:
        return f"__{name}__"
    out = (
        name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")
    )
    return out if _IDENT.match(out) else None


def _unescape(name: str) -> str:
    if name.startswith("__") and name.endswith("__") and name[2:-2] in _RESERVED:
        return name[2:-2]
    return (
        name.replace("__dash__", "-").replace("__dot__", ".").replace("__slash__", "/").replace("__underscores__", "__")
    )


@dataclass(frozen=True)
class Rule:
    """One compiled x-kubernetes-validations entry."""

    raw: dict[str, Any]
    program: cel.RuleProgram
    message_program: cel.RuleProgram | None
    uses_old_self: bool
    field_path: str = ""  # normalised fieldPath (``spec.replicas``, ``[key]``), appended to the error field


def rule_json(raw: dict[str, Any]) -> str:
    """A ValidationRule as the error value prints it: JSON in the Go struct's field order."""
    keys = ("rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf")
    out = {k: raw[k] for k in keys if k in raw and raw[k] not in ("", None)}
    return json.dumps(out, separators=(",", ":"), ensure_ascii=False)


def rule_text(raw: dict[str, Any], key: str) -> str:
    value = raw.get(key)
    return value if isinstance(value, str) else ""


# --- compile-time checks ------------------------------------------------------------------------------


_STRING = Node(raw={"type": "string"}, type="string")
_METADATA = Node(raw={"type": "object"}, type="object", properties={"name": _STRING, "generateName": _STRING})


@dataclass
class _Scan:
    expression: str
    root: Node
    resource_root: bool = False
    problems: list[tuple[int, int, str]] = field(default_factory=list)
    uses_old_self: bool = False

    def problem(self, token: Any, message: str, *, back: int = 0) -> None:
        self.problems.append(
            (getattr(token, "line", 1) or 1, max((getattr(token, "column", 1) or 1) - back, 1), message)
        )

    def visit(self, t: Any, env: dict[str, Node | None]) -> Node | None:
        while hasattr(t, "data") and t.data in _PASS and len(t.children) == 1 and hasattr(t.children[0], "data"):
            t = t.children[0]
        if not hasattr(t, "data"):
            return None
        visit = _VISITS.get(t.data)
        if visit is not None:
            return visit(self, t.children, env)
        for kid in t.children:
            self.visit(kid, env)
        return None

    def _paren(self, kids: list[Any], env: dict[str, Node | None]) -> Node | None:
        return self.visit(kids[0], env)

    def _ident(self, kids: list[Any], env: dict[str, Node | None]) -> Node | None:
        return self.ident(kids[0], env)

    def _member_dot(self, kids: list[Any], env: dict[str, Node | None]) -> Node | None:
        return self.select(self.visit(kids[0], env), kids[1])

    def _member_index(self, kids: list[Any], env: dict[str, Node | None]) -> Node | None:
        receiver = self.visit(kids[0], env)
        self.visit(kids[1], env)
        if receiver is None:
            return None
        return receiver.items if receiver.type == "array" else receiver.additional

    def _ident_arg(self, kids: list[Any], env: dict[str, Node | None]) -> Node | None:
        """A global function call: known functions only; its arguments are visited."""
        name = str(kids[0])
        if name not in _GLOBALS and name != "has" and name not in cel.RULE_FUNCTIONS:
            self.unknown(kids[0], name)
        for arg in _args(kids[1:]):
            self.visit(arg, env)
        return None

    def _dot_ident(self, kids: list[Any], env: dict[str, Node | None]) -> Node | None:
        self.unknown(kids[0], str(kids[0]))
        return None

    def ident(self, token: Any, env: dict[str, Node | None]) -> Node | None:
        name = str(token)
        if name in env:
            return env[name]
        if name == "self":
            return self.root
        if name == "oldSelf":
            self.uses_old_self = True
            return self.root
        if name not in _TYPE_NAMES:
            self.problem(token, f"undeclared reference to '{name}' (in container '')")
        return None

    def unknown(self, token: Any, name: str) -> None:
        if name in _NOT_HERE:
            self.problem(token, f"function '{name}' is not supported by this server's CEL engine")
        else:
            self.problem(token, f"undeclared reference to '{name}' (in container '')")

    def select(self, receiver: Node | None, token: Any) -> Node | None:
        name = _unescape(str(token))
        if receiver is None:
            return None
        if (receiver is self.root and self.resource_root) or receiver.embedded:
            if name in ("apiVersion", "kind"):
                return receiver.properties.get(name) or _STRING
            if name == "metadata":
                return _METADATA  # cel: a resource's metadata exposes name and generateName only
        if receiver.properties:
            found = receiver.properties.get(name)
            if found is None and not receiver.preserve_unknown:
                self.problem(token, f"undefined field '{token}'", back=1)
            return found
        if receiver.additional is not None:
            return receiver.additional
        if receiver.type in ("string", "integer", "number", "boolean", "array"):
            cel_type = {"string": "string", "integer": "int", "number": "double", "boolean": "bool"}.get(
                receiver.type, "list"
            )
            self.problem(token, f"type '{cel_type}' does not support field selection", back=1)
        return None

    def method(self, kids: list[Any], env: dict[str, Node | None]) -> Node | None:
        target, name_token, args = kids[0], kids[1], _args(kids[2:])
        name = str(name_token)
        namespace = _bare_ident(target)
        if namespace in _NAMESPACES and namespace not in env and namespace not in ("self", "oldSelf"):
            self.problem(name_token, f"function '{namespace}.{name}' is not supported by this server's CEL engine")
            return None
        receiver = self.visit(target, env)
        if name in _MACROS and args and _bare_ident(args[0]):
            element = None
            if receiver is not None:
                element = receiver.items if receiver.type == "array" else None
            inner = {**env, str(_bare_ident(args[0])): element}
            for arg in args[1:]:
                self.visit(arg, inner)
            return None
        if name not in _METHODS and name not in cel.RULE_FUNCTIONS:
            self.unknown(name_token, name)
        for arg in args:
            self.visit(arg, env)
        return receiver if name in ("value", "orValue") else None


_Visit = Callable[[_Scan, list[Any], dict[str, Node | None]], Node | None]
_VISITS: dict[str, _Visit] = {
    "paren_expr": _Scan._paren,
    "ident": _Scan._ident,
    "member_dot": _Scan._member_dot,
    "member_index": _Scan._member_index,
    "member_dot_arg": _Scan.method,
    "ident_arg": _Scan._ident_arg,
    "dot_ident": _Scan._dot_ident,
    "dot_ident_arg": _Scan._dot_ident,
}
"""How ``visit`` types each kind of parse-tree node; any other kind only has its children visited."""


def _args(rest: list[Any]) -> list[Any]:
    for item in rest:
        if hasattr(item, "data") and item.data == "exprlist":
            return list(item.children)
    return []


def _bare_ident(t: Any) -> str | None:
    while hasattr(t, "data") and len(t.children) == 1 and t.data in (*_PASS, "paren_expr"):
        t = t.children[0]
    if hasattr(t, "data") and t.data == "ident":
        return str(t.children[0])
    return None


def _caret(expression: str, line: int, column: int, message: str) -> str:
    source = expression.splitlines()[line - 1] if expression.splitlines() else expression
    return f"ERROR: <input>:{line}:{column}: {message}\n | {source}\n | {'.' * (column - 1)}^"


def _check(expression: str, root: Node, *, resource_root: bool) -> tuple[str | None, bool]:
    """(compile failure detail or None, uses oldSelf)."""
    optional = re.search(r"\.\?|\[\?", expression)
    if optional:
        return "compilation failed: optional field selection is not supported by this server's CEL engine", False
    try:
        tree = cel.parse_rule(expression)
    except cel.RuleSyntaxError as exc:
        return "compilation failed: " + _caret(
            expression, exc.line, exc.column, "Syntax error: " + str(exc).split("\n")[0]
        ), False
    scan = _Scan(expression, root, resource_root=resource_root or root.embedded)
    scan.visit(tree, {})
    if scan.problems:
        lines = [_caret(expression, line, column, message) for line, column, message in scan.problems]
        return "compilation failed: " + "\n".join(lines), scan.uses_old_self
    return None, scan.uses_old_self


def normalize_field_path(path: str, root: Node) -> str | None:
    """``fieldPath`` as the error field suffix (``.spec.x`` → ``spec.x``, ``['k']`` → ``[k]``), None if invalid."""
    tokens = re.findall(r"\.([^.\[\]]+)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|(.)", path)
    node: Node | None = root
    out = ""
    for named, quoted, junk in tokens:
        if junk or node is None:
            return None
        key = named or quoted.replace("\\'", "'")
        if node.properties:
            node = node.properties.get(key)
            if node is None:
                return None
            out += f".{key}" if out else key
        elif node.additional is not None:
            node = node.additional
            out += f"[{key}]"
        else:
            return None
    return out if tokens else None


def compile_node(node: Node, path: str, *, uncorrelatable: str | None, resource_root: bool = False) -> list[FieldError]:
    """Compile ``node.rules`` into ``node.compiled``; the errors the CRD is refused with."""
    errors: list[FieldError] = []
    node.compiled = []
    for i, raw in enumerate(node.rules):
        where = f"{path}.x-kubernetes-validations[{i}]"
        rule = rule_text(raw, "rule").strip()
        if not rule:
            continue  # refused as "rule is not specified" by the schema checks
        problem, uses_old_self = _check(rule, node, resource_root=resource_root)
        if problem:
            errors.append(
                FieldError(f"{where}.rule", "FieldValueInvalid", f"Invalid value: {rule_json(raw)}: {problem}")
            )
        message_expression = rule_text(raw, "messageExpression").strip()
        message_program = None
        if message_expression:
            message_problem, _ = _check(message_expression, node, resource_root=resource_root)
            if message_problem:
                detail = "messageExpression " + message_problem
                errors.append(
                    FieldError(
                        f"{where}.messageExpression", "FieldValueInvalid", f"Invalid value: {rule_json(raw)}: {detail}"
                    )
                )
            else:
                message_program = cel.compile_rule(message_expression)
        if uses_old_self and uncorrelatable is not None:
            detail = f"oldSelf cannot be used on the uncorrelatable portion of the schema within {uncorrelatable}"
            errors.append(
                FieldError(
                    f"{where}.rule",
                    "FieldValueInvalid",
                    f"Invalid value: {json.dumps(rule_text(raw, 'rule'))}: {detail}",
                )
            )
        elif not uses_old_self and isinstance(raw.get("optionalOldSelf"), bool):
            value = "true" if raw["optionalOldSelf"] else "false"
            detail = "may not be set if oldSelf is not used in rule"
            errors.append(
                FieldError(f"{where}.optionalOldSelf", "FieldValueInvalid", f"Invalid value: {value}: {detail}")
            )
        if not problem:
            normalized = normalize_field_path(rule_text(raw, "fieldPath"), node) if rule_text(raw, "fieldPath") else ""
            node.compiled.append(Rule(raw, cel.compile_rule(rule), message_program, uses_old_self, normalized or ""))
    return errors


def mark_ruled(node: Node) -> bool:
    """Set ``node.ruled`` on every node that has compiled rules at or below it."""
    below = [mark_ruled(sub) for sub in (*node.properties.values(), node.items, node.additional) if sub is not None]
    node.ruled = bool(node.compiled) or any(below)
    return node.ruled
