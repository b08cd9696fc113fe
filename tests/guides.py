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

import contextlib
import dataclasses
import itertools
import os
import queue
import re
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDES = ROOT / "docs" / "getting-started"
NAMES = ("platform-engineer", "ci-author", "sre-on-call")
REPORTS: dict[str, tuple[str, ...]] = {
    "platform-engineer": ("validate.html", "hand-over.html"),
    "ci-author": (
        "reports/42/validate.html",
        "reports/42/certification.html",
        "reports/43/validate.html",
        "reports/43/certification.html",
    ),
    "sre-on-call": ("fleet.html", "nightly.html"),
}
"""The HTML reports each guide writes, relative to the directory it runs in."""
PICTURES: dict[str, tuple[tuple[str, str], ...]] = {
    "platform-engineer": (("validate.html", "platform-validate.png"), ("hand-over.html", "platform-hand-over.png")),
    "ci-author": (("reports/42/validate.html", "ci-validate.png"),),
    "sre-on-call": (("fleet.html", "sre-fleet.png"), ("nightly.html", "sre-nightly.png")),
}
"""The screenshot of a report each guide shows (docs/getting-started/img/NAME.png): docs/screenshots.py."""
SKIPPED = ("make setup", "source .venv/bin/activate")
"""Commands the caller's environment stands for: the venv's bin first on PATH."""


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
    current: Step | None = None
    lines = text.splitlines()
    inside = False
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("```"):
            inside = line.strip() == "```console" if not inside else False
            current = None
        elif inside and line.startswith("$ "):
            start = i
            command, i = _command(lines, i - 1)
            current = Step(command, [], start)
            steps.append(current)
        elif inside and current is not None and line.strip():
            current.shown.append(line)
    for before, after in itertools.pairwise(steps):
        if after.command.strip() == "echo $?" and after.shown:
            before.expect = int(after.shown[0])
    return steps


def _command(lines: list[str], i: int) -> tuple[str, int]:
    """The command starting at ``lines[i]`` (a ``$`` line) and the index of the line after it:
    lines ending with ``\\`` go on, a here-document takes the lines up to its delimiter."""
    command = [lines[i][2:]]
    i += 1
    while command[-1].endswith("\\") and i < len(lines):
        command.append(lines[i])
        i += 1
    heredoc = _HEREDOC.search(command[-1])
    while heredoc and i < len(lines):
        command.append(lines[i])
        i += 1
        if command[-1].strip() == heredoc.group(1):
            break
    return "\n".join(command), i


_VOLATILE = re.compile(
    r"(?<=127\.0\.0\.1:)\d+"
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


class _Bash:
    """One ``bash`` reading the guide's commands from a pipe, as a terminal's shell reads them.

    Each command's output goes to a file; after it, bash prints a marker line with the status on
    its own stdout, which is all that comes through the pipe. ``$?`` is restored before each
    command, so a guide's ``echo $?`` prints the status of the command above it.
    """

    def __init__(self, workdir: Path, env: Mapping[str, str], outdir: Path) -> None:
        self.outdir = outdir
        self.err = (outdir / "bash.err").open("w")
        self.proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            cwd=workdir,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            text=True,
            start_new_session=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._write(_PRELUDE)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def _write(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def run(self, command: str, out: Path, deadline: float) -> int | None:
        """Run one command, its output into ``out``; its exit status, None when past ``deadline``."""
        token = f"@@{uuid.uuid4().hex}"
        self._write(f'(exit $__rc)\n{{\n{command}\n}} >{out} 2>&1 </dev/null\n__rc=$?\necho "{token} $__rc"\n')
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if line.startswith(token):
                return int(line.split()[1])

    def release(self) -> None:
        """Close the pipes and the log once bash and its session are gone."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout, self.err):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    def close(self, deadline: float) -> None:
        """Leave the shell: its EXIT trap stops the background jobs still running."""
        try:
            self._write("exit 0\n")
            self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except (OSError, subprocess.TimeoutExpired):
            pass


_PRELUDE = r"""set -m  # job control: each background job in its own process group, `kill %N` as in a terminal
__stop() {
  local pid
  for pid in $(jobs -p); do kill -TERM -- "-$pid" 2>/dev/null; done
  for pid in $(jobs -p); do wait "$pid" 2>/dev/null; done
}
trap __stop EXIT
__rc=0
"""

READS = re.compile(
    r"(kubectl get|nvsentinel (nodes(?! release)|events list|validation list|breaker status|monitor)"
    r"|nvcrectl certification list)\b"
)
"""Commands that only look (or, like a monitor pass, publish what is already published): when the
output differs from the guide's, the state the guide shows is not reached yet — the controller
in the background has not caught up — and the command is run again, as a reader looks again."""
LOOK_AGAIN = 120.0
"""Real seconds a look may be repeated: generous, so that only a guide that is wrong reaches it."""
BACKGROUND_START = 300.0
"""Real seconds for a background program's first shown line (the simulated cluster's ``ready``)."""


def run(
    guide: Path, workdir: Path, env: Mapping[str, str], timeout: float = 900.0, look_again: float = LOOK_AGAIN
) -> list[Ran]:
    """Run the guide's commands in ``workdir`` until one does not do what the guide shows.

    Every step comes back with its status (None: not run) and output. ``timeout`` (real seconds)
    only stops a hung guide. However the run ends (a timeout, an exception, Ctrl-C), every
    process of the guide's session is stopped before this returns.
    """
    steps = parse(guide.read_text(encoding="utf-8"))
    outdir = workdir / ".guide-run"
    outdir.mkdir(parents=True, exist_ok=True)
    end = time.monotonic() + timeout
    ran = [Ran(step, None, "") for step in steps]
    bash = _Bash(workdir, env, outdir)
    try:
        for n, step in enumerate(steps):
            if step.skipped:
                continue
            out = outdir / f"{n}.out"
            look_until = time.monotonic() + look_again
            while True:
                status = bash.run(step.command, out, end)
                ran[n] = Ran(step, status, out.read_text(errors="replace") if out.exists() else "")
                good = status == step.expect and not missing(step, ran[n].output)
                if good or not READS.match(step.command) or time.monotonic() > min(look_until, end):
                    break
                time.sleep(0.5)
            if step.background and step.shown and good:
                good = _wait_for_line(out, step.shown[0], min(end, time.monotonic() + BACKGROUND_START))
                ran[n] = Ran(step, status, out.read_text(errors="replace"))
            if not good:
                break
        bash.close(end)
    finally:
        stop_session(bash.proc.pid)
        bash.release()
    return ran


def _wait_for_line(out: Path, shown: str, deadline: float) -> bool:
    """A background program's first shown line before the next command: a reader sees it before
    typing on (the kubeconfig the simulated cluster writes is there once it says ``ready``)."""
    want = pattern(shown)
    while time.monotonic() < deadline:
        if any(want.fullmatch(line.strip()) for line in out.read_text(errors="replace").splitlines()):
            return True
        time.sleep(0.1)
    return False


def failures(ran: list[Ran]) -> list[str]:
    """What did not go as the guide shows, one line per problem; empty when the guide ran as written."""
    problems: list[str] = []
    for r in ran:
        if r.step.skipped:
            continue
        first = r.step.command.splitlines()[0]
        where = f"line {r.step.line}: $ {first}"
        if r.status is None:
            problems.append(f"{where}: not run (a command before it failed, or the guide timed out)")
            break
        if r.status != r.step.expect:
            problems.append(f"{where}: exit {r.status}, the guide expects {r.step.expect}\n{r.output[-3000:]}")
        lost = missing(r.step, r.output)
        if lost:
            shown = "\n".join(f"  {line}" for line in lost)
            problems.append(f"{where}: shown lines not printed:\n{shown}\nprinted:\n{r.output[-3000:]}")
    return problems


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
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
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
