"""nvsentinel's whole configuration: the values file's health sections and its ``lifecycle-manager``.

The file spans two domain packages, so the model of the whole file lives above both:
``shared.health.settings`` models the sections quarantine, drain, remediation and the analyzer read
(and keeps the others as extra keys); ``shared.lifecycle.settings`` models ``lifecycle-manager``.
``load`` is what every nvsentinel command that takes ``--values`` calls, so the whole file is
checked before anything acts, lifecycle tests and CEL criteria included (design: fail fast at load).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from shared.health import settings as hsettings
from shared.lifecycle import settings

if TYPE_CHECKING:  # compiling rule sets is for ``load``; ``nvsentinel rules check`` needs only the models
    from shared.health import config as hconfig


class Settings(hsettings.Settings):
    """The whole values file: health's sections, then ``lifecycle-manager``.

    Fields validate in that order, so a file with several mistakes reports the same first one.
    """

    lifecycle_manager: settings.LifecycleManager = Field(
        default_factory=settings.LifecycleManager, alias="lifecycle-manager"
    )


STRICT_SECTIONS: dict[str, type[BaseModel]] = {
    **hsettings.STRICT_SECTIONS,
    "lifecycle-manager": settings.LifecycleManager,
}
"""Every section in which ``nvsentinel rules check`` reports an unknown key."""


@dataclass(frozen=True)
class Config:
    """A loaded values file: health's ready configuration and the lifecycle's settings."""

    health: hconfig.Config
    lifecycle: settings.LifecycleManager

    @property
    def source(self) -> str:
        return self.health.source


def load(path: Path | None, *, enforce: bool | None = None) -> Config:
    """Settings from ``path`` over the defaults; ``enforce`` True/False overrides global.dryRun."""
    from shared.health import config as hconfig

    data, _, source = hsettings.read_file(path)
    whole = hsettings.validated(Settings, data, source=source)
    hconfig.check_values(data, source=source)  # after the model, whose words for a field come first
    health = hconfig.build(whole, source=source, enforce=enforce)
    if whole.lifecycle_manager.enabled:  # a bad test name or criterion fails the load, not a later pass
        settings.check(settings.with_catalog(whole.lifecycle_manager.config), source=source)
    return Config(health=health, lifecycle=whole.lifecycle_manager)
