"""The getting-started guides run as written, on a fresh clone, reports included.

Each guide (docs/getting-started/*.md) runs as tests/guides.py runs it: its ``$`` commands in order
in one bash, in a temporary directory, against the simulated cluster the guide itself starts. Its
module docstring states the conventions the guides follow and that are checked here: every
command exits 0 unless a following ``$ echo $?`` shows another status; every shown output line
without ``…`` is printed (ports, ages, timestamps and generated hashes match any value); a look
(``kubectl get``, ``nvsentinel nodes``, …) is repeated until the state the guide shows is reached,
within generous real time. ``make setup`` and ``source .venv/bin/activate`` are not run: this
test's environment stands for them (the virtual environment's ``bin`` first on PATH).

Then: the HTML reports the guide writes exist and embed their data block, no process the guide
started outlives it, and every picture a guide shows is in the repository and small.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from shared import htmlpage
from tests import guides

GUIDE_SECONDS = 600
"""Real seconds a guide may take: about a minute each on an idle machine; only a hung guide
reaches it (the guides' waits are for conditions)."""


def _left_in(workdir: Path) -> list[str]:
    """Live processes whose working directory is inside ``workdir``: what the guide started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if state != "Z" and cwd.is_relative_to(workdir):
            found.append(f"{entry.name}: {cmdline.strip()}")
    return found


@pytest.mark.slow
@pytest.mark.timeout(GUIDE_SECONDS + 60)
@pytest.mark.parametrize("name", guides.NAMES)
def test_the_guide_runs_as_written(name: str, tmp_path: Path) -> None:
    env = guides.environment(os.environ, Path(sys.executable).parent)
    ran = guides.run(guides.GUIDES / f"{name}.md", tmp_path, env, timeout=GUIDE_SECONDS)

    problems = guides.failures(ran)
    assert problems == [], f"docs/getting-started/{name}.md does not run as written:\n\n" + "\n\n".join(problems)
    assert _left_in(tmp_path) == []
    for report in guides.REPORTS[name]:
        page = (tmp_path / report).read_text(encoding="utf-8")
        assert 'id="report-data"' in page, report
        assert htmlpage.embedded_data(page), report


def test_every_report_a_guide_writes_is_listed() -> None:
    """A ``--html FILE`` a guide's command writes is among the reports checked above."""
    for name in guides.NAMES:
        steps = guides.parse((guides.GUIDES / f"{name}.md").read_text(encoding="utf-8"))
        written = {m for s in steps for m in re.findall(r"--html\s+([^\s$\"]+)", s.command)}
        assert written <= set(guides.REPORTS[name]), name


def test_every_picture_a_guide_shows_is_in_the_repository_and_small() -> None:
    for name in guides.NAMES:
        text = (guides.GUIDES / f"{name}.md").read_text(encoding="utf-8")
        shown = re.findall(r"!\[[^\]]+\]\((img/[^)]+\.png)\)", text)
        assert sorted(shown) == sorted(f"img/{png}" for _, png in guides.PICTURES[name]), name
        for picture in shown:
            path = guides.GUIDES / picture
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", picture
            assert path.stat().st_size < 400 * 1024, picture


GUIDE = """\
Intro.

```console
$ make setup
$ python -m shared.sim serve --nodes 2 \\
      --kubeconfig-out kubeconfig &        # in the background
ready https://127.0.0.1:41109
$ cat > a.yaml <<'EOF'
name: x
EOF
$ aicr recipe --accelerator h200
error: --accelerator: invalid accelerator 'h200'
$ echo $?
2
$ kubectl get nodes
NAME       STATUS   AGE
node-000   Ready    2m
…
```

```console
[log] not a command
```
"""


def test_a_guide_is_read_as_commands_with_their_output_and_expected_status() -> None:
    steps = guides.parse(GUIDE)
    assert [s.command.splitlines()[0] for s in steps] == [
        "make setup",
        "python -m shared.sim serve --nodes 2 \\",
        "cat > a.yaml <<'EOF'",
        "aicr recipe --accelerator h200",
        "echo $?",
        "kubectl get nodes",
    ]
    setup, serve, heredoc, refused, echo, look = steps
    assert setup.skipped and not serve.skipped
    assert serve.background and not heredoc.background
    assert serve.command.endswith("# in the background") and serve.shown == ["ready https://127.0.0.1:41109"]
    assert heredoc.command.splitlines()[1:] == ["name: x", "EOF"] and heredoc.shown == []
    assert (refused.expect, echo.expect, look.expect) == (2, 0, 0)
    assert guides.checked_lines(serve) == []  # a background program's output comes while others run
    assert guides.checked_lines(look) == ["NAME       STATUS   AGE", "node-000   Ready    2m"]
    assert look.shown[-1] == "…"  # the log block after it is no output of its


def test_shown_lines_match_with_their_volatile_values_left_open() -> None:
    look = guides.parse(GUIDE)[-1]
    assert guides.missing(look, "NAME        STATUS   AGE\nnode-000    Ready    115s\nnode-001 Ready 2m\n") == []
    assert guides.missing(look, "NAME STATUS AGE\nnode-000   NotReady 2m\n") == ["node-000   Ready    2m"]
    ready = guides.pattern("ready https://127.0.0.1:41109")
    assert ready.fullmatch("ready https://127.0.0.1:6443") and not ready.fullmatch("ready https://10.0.0.1:6443")
    generated = guides.pattern("vr-ee1727b481  Succeeded  node-001,node-002")
    assert generated.fullmatch("vr-0a1b2c3d4e  Succeeded  node-001,node-002")
    assert not generated.fullmatch("vr-0a1b2c3d4e  Failed     node-001,node-002")
    assert guides.pattern('{"now": "2026-11-29T23:06:02.944660Z", "speed": 1.0}').fullmatch(
        '{"now": "2026-12-02T10:00:00.5Z", "speed": 1.0}'
    )
    assert not guides.pattern("value 148.00").fullmatch("value 370.00")
