"""The bad-input corpus (tests/badinput/cases.py), each case run as the real program in a child process.

Covers, for every case: the exit status docs/troubleshooting.md documents for it (2 for bad input,
1 where the command is a checker such as ``rules check``, 3 for a node root that is not there);
stderr is exactly one ``error:`` line, naming the culprit (file, field, flag or rule), with no
traceback; nothing is printed on stdout but by a checker; no file or folder of the case's folder
is created, changed or removed; the child's peak memory (its own ``ru_maxrss``, from ``os.wait4``)
stays under 300 MB. Times are measured by ``make bench`` (benches/bench_badinput.py), not here.
Also: the corpus has at least 150 cases over all three programs, and the counts in
docs/troubleshooting.md are the corpus's.
"""

from __future__ import annotations

import concurrent.futures
import re
import tempfile
from pathlib import Path

import pytest

from tests.badinput import cases, runner

CORPUS = cases.corpus()
DOC = Path(__file__).resolve().parents[2] / "docs" / "troubleshooting.md"
MAX_RSS_BYTES = 300 * 1024 * 1024
MIN_CASES = 150


WORKERS = 2
"""Children run two at a time (the machine's two cores); each case is still its own process."""
pytestmark = pytest.mark.timeout(3600)
"""The first test's setup runs every case: a generous real-time bound that only a hang reaches."""


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest) -> dict[str, runner.Outcome]:
    """Every selected case run once, up front: one 50 MB file, recipe and bundle for them all."""
    chosen = [
        item.callspec.params["case"]
        for item in request.session.items
        if item.module is request.module and hasattr(item, "callspec") and "case" in item.callspec.params
    ]
    with tempfile.TemporaryDirectory(prefix="badinput-") as root:
        kit = runner.Kit(Path(root))

        def one(case: cases.Case) -> runner.Outcome:
            return runner.run(kit, runner.make(kit, kit.root, case), case)

        with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
            return dict(zip((c.id for c in chosen), pool.map(one, chosen), strict=True))


@pytest.mark.parametrize("case", CORPUS, ids=[case.id for case in CORPUS])
def test_a_bad_input_is_refused_with_one_line_and_nothing_written(
    outcomes: dict[str, runner.Outcome], case: cases.Case
) -> None:
    outcome = outcomes[case.id]
    lines = outcome.stderr.splitlines()
    assert "Traceback" not in outcome.stderr, outcome.stderr
    assert len(lines) == 1, outcome.stderr
    assert lines[0].startswith("error: ") and case.culprit in lines[0], lines[0]
    assert outcome.code == case.exit, outcome.stderr
    if case.exit != 1:
        assert outcome.stdout == ""
    assert outcome.changed == [], f"written or changed: {outcome.changed}"
    assert outcome.max_rss_bytes < MAX_RSS_BYTES, f"peak memory {outcome.max_rss_bytes >> 20} MiB"


def test_the_corpus_covers_every_program_with_at_least_150_cases() -> None:
    counts = cases.per_program(CORPUS)
    assert set(counts) == {"aicr", "nvcrectl", "nvsentinel"}
    assert sum(counts.values()) >= MIN_CASES


def test_every_reader_is_tried_with_a_50_MB_file_and_every_yaml_reader_with_an_alias_bomb() -> None:
    ids = {case.id for case in CORPUS}
    for reader in cases.READERS:
        assert f"{reader.id}-size-50MB" in ids
        if reader.format == "yaml":
            assert f"{reader.id}-alias-bomb" in ids


def test_the_counts_in_troubleshooting_md_are_the_corpus_counts() -> None:
    """The section between the corpus markers is exactly what :func:`cases.render_counts` makes of it."""
    text = DOC.read_text(encoding="utf-8")
    found = re.search(r"<!-- corpus:counts -->\n(.*?)<!-- /corpus:counts -->", text, flags=re.DOTALL)
    assert found is not None, "docs/troubleshooting.md lacks the corpus:counts section"
    assert found.group(1) == cases.render_counts(CORPUS)
