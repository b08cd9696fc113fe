"""The Dockerfile, checked without a Docker engine: a small parser of its instructions.

Covers: it parses (continuation lines, comments, parser directives, JSON and shell forms); it is
multi-stage and the runtime stage copies from an earlier one; every FROM is pinned to an exact tag
(no ``latest``, no bare ``python:3.11``); the final stage runs as a non-root USER; every program the
ENTRYPOINT/CMD names is a console script in pyproject.toml; what it COPYs exists and is not ignored
by .dockerignore in a way that would break the build.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
INSTRUCTIONS = {
    "FROM",
    "RUN",
    "CMD",
    "LABEL",
    "EXPOSE",
    "ENV",
    "ADD",
    "COPY",
    "ENTRYPOINT",
    "VOLUME",
    "USER",
    "WORKDIR",
    "ARG",
    "ONBUILD",
    "STOPSIGNAL",
    "HEALTHCHECK",
    "SHELL",
    "MAINTAINER",
}


@dataclass(frozen=True)
class Instruction:
    line: int
    keyword: str
    args: str

    def words(self) -> list[str]:
        """JSON (exec) form as its list, shell form split like a shell would."""
        text = self.args.strip()
        if text.startswith("["):
            value = json.loads(text)
            assert isinstance(value, list) and all(isinstance(v, str) for v in value), text
            return value
        return shlex.split(text)


def parse(text: str) -> list[Instruction]:
    """Instructions in order; raises ValueError on an unknown keyword or a dangling continuation."""
    found: list[Instruction] = []
    pending: list[str] = []
    start = 0
    directives_allowed = True
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith("#"):
            if directives_allowed and re.match(r"#\s*\w+\s*=", stripped):
                continue
            directives_allowed = False
            continue
        directives_allowed = False
        if not stripped and not pending:
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(stripped)
        joined = " ".join(p.strip() for p in pending if p.strip())
        pending = []
        keyword, _, args = joined.partition(" ")
        if keyword.upper() not in INSTRUCTIONS:
            raise ValueError(f"line {start}: unknown instruction {keyword!r}")
        found.append(Instruction(start, keyword.upper(), args.strip()))
    if pending:
        raise ValueError(f"line {start}: continuation at end of file")
    return found


def _substitute(value: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), value)


def stages(instructions: list[Instruction]) -> list[list[Instruction]]:
    out: list[list[Instruction]] = []
    for ins in instructions:
        if ins.keyword == "FROM":
            out.append([ins])
        elif out:
            out[-1].append(ins)
        else:
            assert ins.keyword == "ARG", f"line {ins.line}: {ins.keyword} before the first FROM"
    return out


def global_args(instructions: list[Instruction]) -> dict[str, str]:
    values = {}
    for ins in instructions:
        if ins.keyword == "FROM":
            break
        name, _, default = ins.args.partition("=")
        values[name.strip()] = default.strip()
    return values


@pytest.fixture(scope="module")
def dockerfile() -> list[Instruction]:
    return parse((ROOT / "Dockerfile").read_text(encoding="utf-8"))


def test_the_parser_handles_continuations_comments_and_both_forms() -> None:
    parsed = parse('# syntax=docker/dockerfile:1\nFROM a:1 AS b\n# note\nRUN x \\\n  && y\nCMD ["p", "q"]\n')
    assert [(i.keyword, i.args) for i in parsed] == [("FROM", "a:1 AS b"), ("RUN", "x && y"), ("CMD", '["p", "q"]')]
    assert parsed[2].words() == ["p", "q"]
    with pytest.raises(ValueError, match="unknown instruction"):
        parse("FORM a\n")
    with pytest.raises(ValueError, match="continuation"):
        parse("RUN a \\\n")


def test_it_is_multi_stage_and_the_last_stage_copies_from_an_earlier_one(dockerfile: list[Instruction]) -> None:
    built = stages(dockerfile)
    assert len(built) >= 2
    names = [s[0].words()[2] for s in built[:-1] if len(s[0].words()) == 3 and s[0].words()[1].upper() == "AS"]
    copies = [i.args for i in built[-1] if i.keyword == "COPY" and "--from=" in i.args]
    assert copies and all(any(f"--from={n}" in c for n in names) for c in copies)


def test_every_base_image_is_pinned_to_an_exact_tag(dockerfile: list[Instruction]) -> None:
    args = global_args(dockerfile)
    for stage in stages(dockerfile):
        image = _substitute(stage[0].words()[0], args)
        assert "$" not in image, f"unresolved base image {image}"
        if "@sha256:" in image:
            continue
        name, _, tag = image.rpartition(":")
        assert name and tag and tag != "latest", image
        # an exact version: major.minor.patch, not a moving python:3.11
        assert re.match(r"\d+\.\d+\.\d+", tag), f"{image} is not pinned to a patch release"


def test_the_final_stage_runs_as_a_non_root_user(dockerfile: list[Instruction]) -> None:
    users = [i.args.split(":")[0] for i in stages(dockerfile)[-1] if i.keyword == "USER"]
    assert users, "no USER in the final stage"
    assert users[-1] not in ("root", "0")


def test_entry_points_are_console_scripts(dockerfile: list[Instruction]) -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert set(scripts) == {"aicr", "nvcrectl", "nvsentinel"}
    final = stages(dockerfile)[-1]
    entry = [i.words() for i in final if i.keyword == "ENTRYPOINT"]
    cmd = [i.words() for i in final if i.keyword == "CMD"]
    program = (entry[-1] if entry else cmd[-1])[0]
    assert program in scripts
    # the wheel is what gets installed, and it is the project's
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    assert any(i.keyword == "RUN" and "pip install" in i.args and project in i.args for i in final)


def test_what_it_copies_exists_and_is_in_the_build_context(dockerfile: list[Instruction]) -> None:
    ignore = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    for ins in dockerfile:
        if ins.keyword != "COPY" or "--from=" in ins.args:
            continue
        for source in ins.words()[:-1]:
            assert (ROOT / source).exists(), f"line {ins.line}: {source} does not exist"
            assert source.rstrip("/") in allowed, f"line {ins.line}: {source} is excluded by .dockerignore"
