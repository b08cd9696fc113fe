"""Loading nvsentinel's values into a ready configuration: models validated, every CEL compiled.

A failure stops the load with the file, the rule set and the position; nothing is evaluated until
everything compiled (design: fail fast at load).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shared.health import ruleset
from shared.health import values as hvalues
from shared.lifecycle import settings as lifecycle_settings


@dataclass
class Config:
    values: hvalues.Values
    engine: ruleset.Engine
    source: str

    @property
    def fq(self) -> hvalues.FaultQuarantine:
        return self.values.fault_quarantine

    @property
    def dry_run(self) -> bool:
        return self.values.global_.dryRun


def load(path: Path | None, *, enforce: bool | None = None) -> Config:
    """Values from ``path`` over the defaults; ``enforce`` True/False overrides global.dryRun."""
    data, _, source = hvalues.read_file(path)
    model = hvalues.model(data, source=source)
    if enforce is not None:
        model.global_.dryRun = not enforce
    engine = ruleset.Engine(ruleset.compile_rule_sets(model.fault_quarantine.ruleSets, source=source))
    if model.lifecycle_manager.enabled:  # a bad test name or criterion fails the load, not a later pass
        lifecycle_settings.check(lifecycle_settings.with_catalog(model.lifecycle_manager.config), source=source)
    return Config(values=model, engine=engine, source=source)
