"""The test catalog: which workload each category runs, read from package data.

``catalog/tests.yaml`` is the source (a test is a YAML edit); this module gives it a model, finds
an entry by ``domain/variant`` and fills an entry's argv from the category's options. Values are
separate argv tokens handed to the container without a shell, so nothing in them is interpreted.
"""

from __future__ import annotations

import functools
import re
from enum import StrEnum
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared import errors

_PLACEHOLDER = re.compile(r"\{([A-Za-z]+)\}")


class Parser(StrEnum):
    NCCL = "nccl"
    DCGM = "dcgm"
    TRAINING = "training"


class Scope(StrEnum):
    GROUP = "group"
    """One run over the group's nodes (an MPI-style job)."""
    NODE = "node"
    """Each node on its own: one job per node, no isolation needed."""


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str
    variant: str
    description: str
    parser: Parser
    scope: Scope
    image: str
    command: list[str]
    env: dict[str, str] = Field(default_factory=dict)
    defaults: dict[str, str] = Field(default_factory=dict)
    metrics: list[str] = Field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.domain}/{self.variant}"

    def argv(self, values: dict[str, Any]) -> list[str]:
        """The command with every ``{name}`` filled; a name with no value is a catalog bug."""

        def fill(match: re.Match[str]) -> str:
            name = match[1]
            value = values.get(name, self.defaults.get(name))
            if value is None:
                raise errors.Internal(f"catalog entry {self.key}: no value for {{{name}}}")
            return str(value)

        return [_PLACEHOLDER.sub(fill, token) for token in self.command]


class Catalog(BaseModel):
    model_config = ConfigDict(extra="forbid")

    apiVersion: str
    kind: str
    entries: list[Entry]

    def find(self, domain: str, variant: str, *, where: str | None = None) -> Entry:
        for entry in self.entries:
            if entry.domain == domain and entry.variant == variant:
                return entry
        known = ", ".join(e.key for e in self.entries)
        raise errors.InvalidInput(f"unknown category {domain}/{variant}; known: {known}", where=where)


@functools.cache
def load() -> Catalog:
    """The embedded catalog (parsed once per process)."""
    from shared import yamlio

    text = resources.files("shared.certify").joinpath("catalog/tests.yaml").read_text(encoding="utf-8")
    return Catalog.model_validate(yamlio.loads(text, source="shared/certify/catalog/tests.yaml"))
