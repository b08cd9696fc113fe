"""``nvsentinel rules check``: everything in a values file that would fail at load or at run time.

Found without a cluster, each with the file, line and column and the rule set's name: YAML errors,
unknown keys in the sections nvsentinel reads, bad enum values, duplicate rule-set names; every
duration, label selector, label key and value (``valuecheck``); and for each rule its CEL syntax,
its types (``typecheck``: unknown functions and fields, an enum compared with its name, a string
compared with an int, ...) and, when those pass, one evaluation on a sample event or node of its
kind (``samples``), so what the checker misses but fails at every evaluation is caught too.
``nvsentinel run`` refuses to start on any of these (``shared.operate.service.run``).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from shared import cel, errors
from shared.health import positions, samples, settings, typecheck, valuecheck


@dataclass(frozen=True)
class Problem:
    """One finding: ``where`` is ``file:line:column`` (or the file alone), ``rule`` the rule set's name."""

    where: str
    rule: str
    message: str

    def line(self) -> str:
        rule = f"rule set {self.rule!r}: " if self.rule else ""
        return f"{self.where}: {rule}{self.message}"


def _unknown_keys(data: Any, model: type[BaseModel], path: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if not isinstance(data, dict):
        return found
    fields = {f.alias or name: f for name, f in model.model_fields.items()}
    for key, value in data.items():
        child = f"{path}.{key}" if path else str(key)
        if key not in fields:
            found.append((child, f"unknown field {key!r} (known: {', '.join(sorted(fields))})"))
            continue
        found.extend(_walk(value, fields[key].annotation, child))
    return found


def _walk(value: Any, annotation: Any, path: str) -> list[tuple[str, str]]:
    """Unknown keys inside a field's value: a model, a list of models, or a map of them (by key)."""
    if typing.get_origin(annotation) is dict:
        inner = typing.get_args(annotation)[1]
        if not isinstance(value, dict):
            return []
        return [p for key, item in value.items() for p in _walk(item, inner, f"{path}.{key}")]
    for candidate in (*typing.get_args(annotation), annotation):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            if isinstance(value, list):
                return [p for i, item in enumerate(value) for p in _unknown_keys(item, candidate, f"{path}[{i}]")]
            return _unknown_keys(value, candidate, path)
    return []


def _known_only(data: Any, model: type[BaseModel]) -> Any:
    """``data`` without the keys ``model`` does not know (already reported), so the rest is checked."""
    if not isinstance(data, dict):
        return data
    fields = {f.alias or name: f for name, f in model.model_fields.items()}
    kept: dict[str, Any] = {}
    for key, value in data.items():
        if key not in fields:
            continue
        annotation = fields[key].annotation
        inner = next(
            (
                c
                for c in (*getattr(annotation, "__args__", ()), annotation)
                if isinstance(c, type) and issubclass(c, BaseModel)
            ),
            None,
        )
        if inner is None:
            kept[key] = value
        elif isinstance(value, list):
            kept[key] = [_known_only(item, inner) for item in value]
        else:
            kept[key] = _known_only(value, inner)
    return kept


def check(
    path: Path,
    *,
    sections: Mapping[str, type[BaseModel]] = settings.STRICT_SECTIONS,
    schema: type[settings.Settings] = settings.Settings,
) -> list[Problem]:
    """Every problem in the file; an empty list means it loads and every rule can match.

    ``sections`` are checked for unknown keys and ``schema`` validates the whole file; both default
    to health's own sections (``shared.operate.config`` passes the whole file's).
    """
    from shared import yamlio

    text = yamlio.read_text(path)
    source = str(path)
    try:
        user = yamlio.loads(text, source=source)
    except errors.InvalidInput as exc:
        return [Problem(exc.where or source, "", exc.message)]
    if user is None:
        user = {}
    if not isinstance(user, dict):
        return [Problem(source, "", "a values file must be a mapping")]
    locate = positions.Locator(text, source)

    problems: list[Problem] = []
    for section, model in sections.items():
        for dotted, message in _unknown_keys(user.get(section), model, section):
            problems.append(Problem(locate.place(locate.of(dotted)), "", message))
    names = _rule_set_names(user)
    for dotted, message in valuecheck.problems(user):
        problems.append(Problem(locate.place(locate.of(dotted, value=True)), _owner(dotted, names), message))
    raw_sets = (user.get("fault-quarantine") or {}).get("ruleSets") or []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_sets if isinstance(raw_sets, list) else []):
        problems.extend(_rule_set_problems(raw, index, seen=seen, locate=locate))
    if not problems:  # what only the whole model checks (a drain policy's selector, exclusive options)
        try:
            settings.validated(schema, settings.layered(user), source=source)
        except errors.InvalidInput as exc:
            field = exc.message.split(":", 1)[0]
            problems.append(Problem(locate.place(locate.of(field)), "", exc.message))
    return problems


def _rule_set_names(user: dict[str, Any]) -> list[str]:
    raw_sets = (user.get("fault-quarantine") or {}).get("ruleSets") or []
    return [str(r.get("name", "")) if isinstance(r, dict) else "" for r in raw_sets if isinstance(raw_sets, list)]


def _owner(dotted: str, names: list[str]) -> str:
    """The rule set a value belongs to (``fault-quarantine.ruleSets[2].taint.key``), else ''."""
    prefix = "fault-quarantine.ruleSets["
    if not dotted.startswith(prefix):
        return ""
    index = int(dotted[len(prefix) :].split("]", 1)[0])
    return names[index] if index < len(names) else ""


def _rule_set_problems(raw: Any, index: int, *, seen: dict[str, int], locate: positions.Locator) -> list[Problem]:
    """What is wrong with ``ruleSets[index]``; ``seen`` (name → first index) finds duplicate names."""
    base = f"fault-quarantine.ruleSets[{index}]"
    name = str(raw.get("name", "")) if isinstance(raw, dict) else ""
    try:
        spec = settings.RuleSet.model_validate(_known_only(raw, settings.RuleSet))
    except Exception as exc:
        problems = []
        for err in getattr(exc, "errors", lambda: [])():
            loc = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in err["loc"]).replace(".[", "[")
            problems.append(Problem(locate.place(locate.of(f"{base}.{loc}", value=True)), name, f"{loc}: {err['msg']}"))
        return problems
    problems = []
    if spec.name in seen:
        problems.append(
            Problem(
                locate.place(locate.of(f"{base}.name", value=True)),
                name,
                f"duplicate name (also ruleSets[{seen[spec.name]}])",
            )
        )
    seen.setdefault(spec.name, index)
    if not spec.match.all and not spec.match.any:
        problems.append(Problem(locate.place(locate.of(f"{base}.match")), name, "match has no rules: it never matches"))
    for group in ("all", "any"):
        for i, rule in enumerate(getattr(spec.match, group)):
            dotted = f"{base}.match.{group}[{i}].expression"
            problems.extend(
                Problem(where, name, f"match.{group}[{i}]: {message}")
                for where, message in rule_problems(rule.kind, rule.expression, dotted, locate)
            )
    return problems


def rule_problems(kind: str, expression: str, dotted: str, locate: positions.Locator) -> list[tuple[str, str]]:
    """(place, message) for one rule: its syntax, then its types, then one evaluation on a sample."""
    try:
        cel.compile(expression, name="rule")
    except errors.InvalidInput as exc:
        message = exc.message.removeprefix("rule 'rule': ")
        try:
            cel.parse_rule(expression)
        except cel.RuleSyntaxError as syntax:  # the same grammar, with the error's position in the expression
            return [(locate.place(locate.in_expression(dotted, expression, syntax.line, syntax.column)), message)]
        return [(locate.place(locate.of(dotted, value=True)), message)]
    found = [
        (locate.place(locate.in_expression(dotted, expression, p.line, p.column)), p.message)
        for p in typecheck.check(kind, expression)
    ]
    if not found:
        failure = samples.evaluation_problem(kind, expression)
        if failure is not None:
            found.append((locate.place(locate.in_expression(dotted, expression, 1, 1)), failure))
    return found
