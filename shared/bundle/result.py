"""What a deployer produced, and the short summary ``aicr bundle`` prints (upstream's shape)."""

from __future__ import annotations

from pydantic import BaseModel, Field

OUTPUT_PLACEHOLDER = "{output}"


class BundleResult(BaseModel):
    """A written bundle: its files, the notes worth reading, and how to deploy it.

    ``steps`` may hold ``{output}``, replaced by the output directory when printed, because the
    deployer writes into a staging folder whose name the user never sees.
    """

    deployer: str
    title: str
    output: str = ""
    files: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    steps: list[str] = Field(default_factory=list)

    def text(self) -> str:
        lines = [
            "",
            f"{self.title} generated successfully!",
            f"Output directory: {self.output}",
            f"Files generated: {len(self.files)}",
        ]
        if self.notes:
            lines += ["", "Note:", *(f"  - {note}" for note in self.notes)]
        if self.steps:
            lines += ["", "To deploy:"]
            lines += [
                f"  {i}. {step.replace(OUTPUT_PLACEHOLDER, self.output)}" for i, step in enumerate(self.steps, start=1)
            ]
        return "\n".join(lines) + "\n"
