"""Reading upstream AICR's golden transcripts (research/aicr-golden/NN-*.txt)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Transcript:
    name: str
    argv: list[str]
    exit_code: int
    stdout: str
    stderr: str


def read(path: Path) -> Transcript:
    text = path.read_text(encoding="utf-8")
    first, rest = text.split("\n", 1)
    assert first.startswith("$ aicr "), path
    code_line, rest = rest.split("\n", 1)
    exit_code = int(code_line.split(":")[1])
    _, rest = rest.split("--- stdout:\n", 1)
    stdout, rest = rest.split("--- stderr (ANSI stripped):\n", 1)
    stderr = rest.split("\n--- ", 1)[0]
    return Transcript(path.stem, shlex.split(first[2:])[1:], exit_code, stdout, stderr)
