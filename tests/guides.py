"""Run a getting-started guide (docs/getting-started/*.md) as written: its ``console`` blocks, in order.

A guide's ```` ```console ```` blocks hold ``$ command`` lines and, below each, what it printed.
A command goes on with the next line when its line ends with ``\\``, and a here-document
(``<<'EOF'``) takes the lines up to its delimiter. Everything else in a block is the output of
the command above it; a block without a ``$`` line (a log excerpt) runs nothing.

The conventions the guides follow, which this module checks:

* **Exit status.** Every command exits 0, except one that is followed by ``$ echo $?``: that
  command exits with the number the ``echo $?`` line shows. A command whose failure the guide
  shows otherwise writes ``; echo "exit $?"`` on its own line, which exits 0.
* **Output.** Every output line the guide shows appears, as a line, in what the command printed
  (stdout and stderr), except a line holding ``…`` (trimmed) and a line shown for a command run
  with ``&`` (its output arrives while the next commands run). In a shown line, the values that
  change from run to run match any value: ports (``127.0.0.1:41109``), ages and durations
  (``2m``, ``115s``), timestamps, UUIDs and hex digests of 8 or more digits (generated names such
  as ``vr-ee1727b481``); runs of spaces match any run of spaces (a wider value widens a table).
* **Set-up.** ``make setup`` and ``source .venv/bin/activate`` are not run: the caller's PATH puts
  the virtual environment's ``bin`` first, which is what they do.
* **Background.** A command ending with ``&`` starts a program that keeps running; the guide
  stops it with ``kill %N``. Whatever is still running when the guide ends is stopped by its
  process group (the script runs with job control, so each background job has its own group).

The whole guide runs in one ``bash`` process, in a directory of its own, so ``export``, ``%N``
job numbers and files carry from one command to the next, as in the reader's terminal. Standard
library only: ``docs/screenshots.py`` runs the guides with it too.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDES = ROOT / "docs" / "getting-started"
SKIPPED = ("make setup", "source .venv/bin/activate")
"""Commands the caller's environment stands for: the venv's bin first on PATH."""
FAILED_STEP = 97
"""The script's exit status when a command exited otherwise than the guide shows."""


@dataclasses.dataclass
class Step:
    """One ``$`` command of a guide, what the guide shows it printed, and the exit it expects."""

    command: str
    shown: list[str]
    line: int
    expect: int = 0

    @property
    def background(self) -> bool:
        code = re.sub(r"\s+#[^'\"]*$", "", self.command).rstrip()
        return code.endswith("&") and not code.endswith("&&")

    @property
    def skipped(self) -> bool:
        return self.command.split("#", 1)[0].strip() in SKIPPED


@dataclasses.dataclass
class Ran:
    """A step after the run: its exit status (None: not reached) and everything it printed."""

    step: Step
    status: int | None
    output: str


_HEREDOC = re.compile(r"<<-?\s*'?\"?(\w+)'?\"?")


def parse(text: str) -> list[Step]:
    """The guide's ``$`` commands in order, with their shown output and expected exit status."""
    steps: list[Step] = []
    lines = text.splitlines()
    inside = False
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("```"):
            inside = line.strip() == "```console" if not inside else False
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            start = i
            command = [line[2:]]
            while command[-1].endswith("\\") and i < len(lines):
                command.append(lines[i])
                i += 1
            heredoc = _HEREDOC.search(command[-1])
            if heredoc:
                while i < len(lines):
                    command.append(lines[i])
                    i += 1
                    if command[-1].strip() == heredoc.group(1):
                        break
            steps.append(Step("\n".join(command), [], start))
        elif steps and line.strip():
            steps[-1].shown.append(line)
    for before, after in zip(steps, steps[1:], strict=False):
        if after.command.strip() == "echo $?" and after.shown:
            before.expect = int(after.shown[0])
    return steps


_VOLATILE = re.compile(
    r"127\.0\.0\.1:\d+"
    r"|\d{4}-\d\d-\d\dT[\d:.]+Z?"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|(?<![\w.])\d+(?:\.\d+)?(?:ms|s|m|h|d)(?:\d+(?:s|m))?(?![\w.])"
    r"|(?<![0-9a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}(?![0-9a-f])"
)


def pattern(shown: str) -> re.Pattern[str]:
    """A shown output line as a regular expression: volatile values and space runs match any."""
    out: list[str] = []
    last = 0
    text = shown.strip()
    for found in _VOLATILE.finditer(text):
        out.append(re.escape(text[last : found.start()]))
        out.append(r"\S+?")
        last = found.end()
    out.append(re.escape(text[last:]))
    return re.compile(re.sub(r"(\\ )+", r"\\s+", "".join(out)))


def checked_lines(step: Step) -> list[str]:
    """The shown lines that must appear in the command's output (module docstring: Output)."""
    if step.background:
        return []
    return [line for line in step.shown if "…" not in line]


def missing(step: Step, output: str) -> list[str]:
    """The checked shown lines that no line of ``output`` matches."""
    printed = [line.strip() for line in output.splitlines()]
    return [shown for shown in checked_lines(step) if not any(pattern(shown).fullmatch(p) for p in printed)]


def script(steps: list[Step], outdir: Path) -> str:
    """The bash script that runs the steps in order and stops at the first unexpected exit status.

    Each command's output goes to ``outdir/N.out`` and its status to ``outdir/N.rc``; ``$?`` is
    restored before the next command, so a guide's ``echo $?`` prints the status of the command
    above it. On exit every background job still running is stopped by its process group.
    """
    lines = [
        "set -m  # job control: each background job in its own process group",
        "__stop() { for __pid in $(jobs -p); do kill -TERM -- -\"$__pid\" 2>/dev/null; done; "
        'for __pid in $(jobs -p); do wait "$__pid" 2>/dev/null; done; }',
        "trap __stop EXIT",
        "__rc=0",
    ]
    for n, step in enumerate(steps):
        if step.skipped:
            continue
        lines += [
            f"(exit $__rc)",
            "{",
            step.command,
            f"}} >{outdir}/{n}.out 2>&1 </dev/null",
            "__rc=$?",
            f"echo $__rc >{outdir}/{n}.rc",
            f"[ $__rc -eq {step.expect} ] || exit {FAILED_STEP}",
        ]
        if step.background:
            lines.append(f"__waitfor {outdir}/{n}.out {_quote(step.shown[0])}" if step.shown else "")
    return "\n".join([_WAITFOR, *lines, ""])


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


_WAITFOR = r"""
# A background program's first shown line (the simulated cluster's `ready …`) before the next
# command: a reader sees it before typing on; a script must wait for it. Up to 300 real seconds.
__waitfor() {
  local first="${2%%[0-9]*}" i
  for i in $(seq 3000); do
    grep -qF -- "$first" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "no '$first' in $1" >&2
  return 1
}
"""


def run(
    guide: Path, workdir: Path, env: Mapping[str, str], timeout: float = 900.0
) -> tuple[list[Ran], subprocess.CompletedProcess[str]]:
    """Run the guide's commands in ``workdir``; every step with its status and output.

    ``timeout`` (real seconds) only stops a hung guide. However the run ends (a timeout, an
    exception, Ctrl-C), every process of the guide's session is stopped before this returns.
    """
    steps = parse(guide.read_text(encoding="utf-8"))
    outdir = workdir / ".guide-run"
    outdir.mkdir(parents=True, exist_ok=True)
    body = script(steps, outdir)
    (outdir / "script.sh").write_text(body, encoding="utf-8")
    proc = subprocess.Popen(
        ["bash", str(outdir / "script.sh")],
        cwd=workdir,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_session(proc.pid)
        out, err = proc.communicate()
    finally:
        stop_session(proc.pid)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    ran = []
    for n, step in enumerate(steps):
        rc = outdir / f"{n}.rc"
        output = outdir / f"{n}.out"
        ran.append(
            Ran(
                step,
                int(rc.read_text()) if rc.exists() else None,
                output.read_text(errors="replace") if output.exists() else "",
            )
        )
    return ran, done


def _session(sid: int) -> list[int]:
    """The live processes of session ``sid``: the guide's bash and every program it started, each
    background job in a process group of its own but all in bash's session."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def stop_session(sid: int, grace: float = 10.0) -> None:
    """SIGTERM every process of the session (the simulated cluster saves and exits 0 on it), then
    SIGKILL what is left after ``grace`` real seconds. A normal end finds nothing left: the
    script's EXIT trap stopped its jobs; this is for a timeout, an exception or Ctrl-C."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _session(sid):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while _session(sid) and time.monotonic() < deadline:
            time.sleep(0.1)


def environment(base: Mapping[str, str], bin_dir: Path) -> dict[str, str]:
    """The environment ``make setup`` and ``source .venv/bin/activate`` give: ``bin_dir`` first on PATH."""
    env = {k: v for k, v in base.items() if k not in ("KUBECONFIG", "PYTHONHOME")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{base.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    env["NO_COLOR"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def report(ran: list[Ran]) -> Iterator[str]:
    """Lines describing each step's outcome, for an assertion message."""
    for r in ran:
        first = r.step.command.splitlines()[0]
        yield f"line {r.step.line}: exit {r.status} (expected {r.step.expect}): $ {first}"
