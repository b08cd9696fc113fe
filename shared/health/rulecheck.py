"""``nvsentinel rules check``: everything wrong with a values file, each with rule name and position.

Found without a cluster: YAML errors, unknown keys in the sections nvsentinel reads, bad enum values,
duplicate rule-set names, CEL syntax, variables a rule's kind does not have (``node`` in a
HealthEvent rule), and fields a HealthEvent or a Node lacks (``event.isFatall``,
``node.metadata.label``). celpy has no type checker, so the field check reads the expression's
member paths after string literals are blanked out.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from shared import cel, errors
from shared.health import event, settings

NODE_FIELDS: dict[str, set[str]] = {
    "": {"apiVersion", "kind", "metadata", "spec", "status"},
    "metadata": {
        "name",
        "labels",
        "annotations",
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "generateName",
        "namespace",
        "ownerReferences",
        "finalizers",
        "deletionTimestamp",
        "generation",
        "managedFields",
    },
    "spec": {"unschedulable", "taints", "podCIDR", "podCIDRs", "providerID", "configSource", "externalID"},
    "status": {
        "conditions",
        "capacity",
        "allocatable",
        "addresses",
        "nodeInfo",
        "images",
        "phase",
        "daemonEndpoints",
        "volumesInUse",
        "volumesAttached",
        "config",
        "runtimeHandlers",
        "features",
    },
}
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


@dataclass(frozen=True)
class Problem:
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


def field_problems(kind: str, expression: str) -> list[str]:
    """Variables and member names the expression uses that its kind's input lacks."""
    text = _STRING.sub("''", expression)
    problems = []
    own, other = ("event", "node") if kind == "HealthEvent" else ("node", "event")
    if re.search(rf"(?<![\w.]){other}\s*\.", text):
        problems.append(f"a {kind} rule has no variable {other!r} (only {own!r})")
    if kind == "HealthEvent":
        known = set(event.HealthEvent.model_fields)
        for name in re.findall(r"(?<![\w.])event\s*\.\s*([A-Za-z_]\w*)", text):
            if name not in known:
                problems.append(f"a HealthEvent has no field {name!r}")
    else:
        for path in re.findall(r"(?<![\w.])node((?:\s*\.\s*[A-Za-z_]\w*)+)", text):
            parts = [p.strip() for p in path.split(".") if p.strip()]
            if parts and parts[0] not in NODE_FIELDS[""]:
                problems.append(f"a Node has no field {parts[0]!r}")
            elif (
                len(parts) > 1
                and parts[0] in NODE_FIELDS
                and parts[1] not in NODE_FIELDS[parts[0]]
                and parts[1] not in {"exists", "all", "exists_one", "map", "filter", "size"}
            ):
                problems.append(f"a Node has no field '{parts[0]}.{parts[1]}'")
    return problems


def check(
    path: Path,
    *,
    sections: Mapping[str, type[BaseModel]] = settings.STRICT_SECTIONS,
    schema: type[settings.Settings] = settings.Settings,
) -> list[Problem]:
    """Every problem in the file; an empty list means it loads and every rule compiles.

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
    if not isinstance(user, dict):
        return [Problem(source, "", "a values file must be a mapping")]

    def where(dotted: str) -> str:
        line = yamlio.line_of(text, dotted)
        return f"{source}:{line}" if line else source

    problems: list[Problem] = []
    for section, model in sections.items():
        for dotted, message in _unknown_keys(user.get(section), model, section):
            problems.append(Problem(where(dotted), "", message))
    raw_sets = (user.get("fault-quarantine") or {}).get("ruleSets") or []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_sets if isinstance(raw_sets, list) else []):
        problems.extend(_rule_set_problems(raw, index, seen=seen, where=where))
    if not problems:  # what only the whole model checks (a drain policy's selector, exclusive options)
        try:
            settings.validated(schema, settings.layered(user), source=source)
        except errors.InvalidInput as exc:
            field = exc.message.split(":", 1)[0]
            problems.append(Problem(where(field), "", exc.message))
    return problems


def _rule_set_problems(raw: Any, index: int, *, seen: dict[str, int], where: Callable[[str], str]) -> list[Problem]:
    """What is wrong with ``ruleSets[index]``; ``seen`` (name → first index) finds duplicate names."""
    base = f"fault-quarantine.ruleSets[{index}]"
    name = str(raw.get("name", "")) if isinstance(raw, dict) else ""
    try:
        spec = settings.RuleSet.model_validate(_known_only(raw, settings.RuleSet))
    except Exception as exc:
        problems = []
        for err in getattr(exc, "errors", lambda: [])():
            loc = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in err["loc"]).replace(".[", "[")
            problems.append(Problem(where(f"{base}.{loc}"), name, f"{loc}: {err['msg']}"))
        return problems
    problems = []
    if spec.name in seen:
        problems.append(Problem(where(f"{base}.name"), name, f"duplicate name (also ruleSets[{seen[spec.name]}])"))
    seen.setdefault(spec.name, index)
    if not spec.match.all and not spec.match.any:
        problems.append(Problem(where(f"{base}.match"), name, "match has no rules: it never matches"))
    for group in ("all", "any"):
        for i, rule in enumerate(getattr(spec.match, group)):
            at = where(f"{base}.match.{group}[{i}].expression")
            try:
                cel.compile(rule.expression, name=spec.name)
            except errors.InvalidInput as exc:
                problems.append(Problem(at, "", f"match.{group}[{i}]: {exc.message}"))
                continue
            problems.extend(
                Problem(at, name, f"match.{group}[{i}]: {m}") for m in field_problems(rule.kind, rule.expression)
            )
    return problems
