"""Health's part of nvsentinel's values as a ready configuration: models validated, every CEL compiled.

A failure stops the load with the file, the rule set and the position; nothing is evaluated until
everything compiled (design: fail fast at load). ``build`` is the step the whole file's loader
(``shared.operate.config.load``, which also checks ``lifecycle-manager``) shares with ``load``;
``load`` reads health's sections alone, for code and tests that run quarantine by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared import errors
from shared.health import ruleset
from shared.health import settings as hsettings


@dataclass
class Config:
    settings: hsettings.Settings
    engine: ruleset.Engine
    source: str

    @property
    def fq(self) -> hsettings.FaultQuarantine:
        return self.settings.fault_quarantine

    @property
    def dry_run(self) -> bool:
        return self.settings.global_.dryRun


def load(path: Path | None, *, enforce: bool | None = None) -> Config:
    """Values from ``path`` over the defaults; ``enforce`` True/False overrides global.dryRun."""
    data, _, source = hsettings.read_file(path)
    model = hsettings.model(data, source=source)
    check_values(data, source=source)  # after the model, whose words for a field come first
    return build(model, source=source, enforce=enforce)


def check_values(data: dict[str, Any], *, source: str) -> None:
    """The first duration, selector, label or taint that fails its parser or grammar, as the
    controllers would only find out when they first use it (``rules check`` lists them all)."""
    from shared.health import valuecheck

    found = valuecheck.problems(data)
    if found:
        raise errors.InvalidInput(found[0][1], where=source)


def build(model: hsettings.Settings, *, source: str, enforce: bool | None = None) -> Config:
    """The configuration of validated values: ``enforce`` applied, every rule set compiled."""
    if enforce is not None:
        model.global_.dryRun = not enforce
    engine = ruleset.Engine(ruleset.compile_rule_sets(model.fault_quarantine.ruleSets, source=source))
    return Config(settings=model, engine=engine, source=source)
