"""What ``aicr bundle`` asks for: the CLI builds this, the library does the rest."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class BundleRequest(BaseModel):
    """Flags of ``aicr bundle`` as given (strings are parsed, and refused, by the library)."""

    model_config = ConfigDict(frozen=True)

    recipe: str | Path
    """A file or ``cm://NAMESPACE/NAME`` (read with ``kubeconfig``/``context``)."""
    deployer: str = "helm"
    output: Path = Path(".")
    sets: list[str] = Field(default_factory=list)
    repo: str | None = None
    system_node_selector: list[str] = Field(default_factory=list)
    system_node_toleration: list[str] = Field(default_factory=list)
    accelerated_node_selector: list[str] = Field(default_factory=list)
    accelerated_node_toleration: list[str] = Field(default_factory=list)
    workload_selector: list[str] = Field(default_factory=list)
    workload_gate: str | None = None
    nodes: int | None = None
    data_dir: Path | None = None
    catalog_dir: Path | None = None
    force: bool = False
    kubeconfig: Path | None = None
    context: str | None = None
