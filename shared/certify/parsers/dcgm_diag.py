"""``dcgmi diag`` output → per-test and per-GPU verdicts.

Two shapes, detected from the text:

- the table DCGM 3 prints (``| GPU Memory | Fail - All |``, sections ``|-----  Hardware  ---+``,
  ``Warning``/``Info`` rows whose text DCGM cuts every 45 characters mid-word, result rows
  ``Pass``, ``Skip - All``, ``Pass - GPUs: 0, 1`` and ``Fail - GPU: 3`` for mixed verdicts);
- the JSON of ``dcgmi diag -j`` in DCGM 4 (``DCGM Diagnostic`` → ``test_categories`` → tests →
  per-entity ``results`` with ``warnings``).

A warning that starts with ``GPU <n>`` is that GPU's; a ``Fail - All`` test fails every GPU the
metadata lists. Verdict ``fail`` when any test failed, ``error`` when nothing could be read (or
dcgmi printed ``Error:``), else ``pass``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

Verdict = Literal["pass", "fail", "error"]
Status = Literal["pass", "fail", "skip", "warn"]

_RESULT = re.compile(r"^(Pass|Fail|Skip|Warn)(?:\s*-\s*(?:(All)|GPUs?:\s*([\d,\s]+)))?\s*$")
_SECTION = re.compile(r"^[|+]-+\s+(.+?)\s+-+\+")
_GPU = re.compile(r"^GPU (\d+)\b")
_CHUNK = 45
_NOTES = ("Warning", "Info")


class GpuResult(BaseModel):
    gpu: int
    status: Status
    messages: list[str] = Field(default_factory=list)


class TestResult(BaseModel):
    category: str
    name: str
    status: Status
    gpus: list[GpuResult] = Field(default_factory=list)
    messages: list[str] = Field(default_factory=list, description="Info and warnings not tied to one GPU.")


class DcgmResult(BaseModel):
    verdict: Verdict
    format: Literal["text", "json"] | None = None
    dcgm_version: str | None = None
    driver_version: str | None = None
    gpu_count: int | None = None
    tests: list[TestResult] = Field(default_factory=list)
    failed_tests: list[str] = Field(default_factory=list)
    failed_gpus: dict[int, list[str]] = Field(default_factory=dict, description="GPU → names of the tests it failed.")
    errors: list[str] = Field(default_factory=list)


def _status(word: str) -> Status:
    value = word.strip().lower()
    if value.startswith("fail"):
        return "fail"
    if value.startswith("skip") or value in ("not run", "notrun"):
        return "skip"
    if value.startswith("warn"):
        return "warn"
    return "pass"


def _overall(statuses: list[Status]) -> Status:
    if "fail" in statuses:
        return "fail"
    if "warn" in statuses:
        return "warn"
    if statuses and all(s == "skip" for s in statuses):
        return "skip"
    return "pass"


def _finish(
    tests: list[TestResult],
    *,
    fmt: Literal["text", "json"],
    version: str | None,
    driver: str | None,
    gpus: int | None,
    errors: list[str],
) -> DcgmResult:
    failed_gpus: dict[int, list[str]] = {}
    for test in tests:
        for gpu in test.gpus:
            if gpu.status == "fail":
                failed_gpus.setdefault(gpu.gpu, []).append(test.name)
    failed = [t.name for t in tests if t.status == "fail"]
    verdict: Verdict = "error" if errors or not tests else ("fail" if failed else "pass")
    if not tests and not errors:
        errors = ["no diagnostic results found"]
    return DcgmResult(
        verdict=verdict,
        format=fmt,
        dcgm_version=version,
        driver_version=driver,
        gpu_count=gpus,
        tests=tests,
        failed_tests=failed,
        failed_gpus=dict(sorted(failed_gpus.items())),
        errors=errors,
    )


# ------------------------------------------------------------------ text
class _Table:
    def __init__(self) -> None:
        self.tests: list[TestResult] = []
        self.meta: dict[str, str] = {}
        self.category = ""
        self.verdicts: list[tuple[Status, list[int] | None]] = []  # of the current test
        self.note: list[str] | None = None  # chunks of the note being read

    def read(self, line: str) -> None:
        """One line: a section heading, a ``| name | cell |`` row, or anything else (skipped)."""
        if (section := _SECTION.match(line)) is not None:
            self.close_test(_gpu_count(self.meta))
            self.category = section[1].strip()
            return
        if not line.startswith("|") or line.count("|") < 3:
            return
        bar = line.index("|", 1)
        left = line[1:bar].strip()
        cell = line[bar + 2 : -2] if len(line) > bar + 2 else ""
        if (left == "Diagnostic" and cell.strip() == "Result") or self.category == "":
            return
        if self.category == "Metadata":
            self.meta[left] = cell.strip()
            return
        self._row(left, cell)

    def _row(self, left: str, cell: str) -> None:
        """A row of a test section: a note, a note's continuation, a verdict, or a new test."""
        result = _RESULT.match(cell.strip())
        if left in _NOTES:
            self.close_note()
            self.note = [cell[:_CHUNK]]
            if self.tests and not self.tests[-1].gpus:
                self.tests[-1].gpus = [GpuResult(gpu=g, status="pass") for g in range(_gpu_count(self.meta) or 0)]
        elif left == "" and self.note is not None:
            self.note.append(cell[:_CHUNK])
        elif left == "" and result is not None:
            self.verdicts.append(_verdict(result))
        elif left:
            self.close_test(_gpu_count(self.meta))
            self.tests.append(TestResult(category=self.category, name=left, status="pass"))
            if result is not None:
                self.verdicts.append(_verdict(result))

    def close_note(self) -> None:
        if self.note is None or not self.tests:
            self.note = None
            return
        text = ("".join(self.note[:-1]) + self.note[-1]).strip()
        self.note = None
        test = self.tests[-1]
        found = _GPU.match(text)
        owner = next((g for g in test.gpus if found and g.gpu == int(found[1])), None)
        if owner is not None:
            owner.messages.append(text)
        else:
            test.messages.append(text)

    def close_test(self, gpu_count: int | None) -> None:
        self.close_note()
        if not self.tests or not self.verdicts:
            return
        test = self.tests[-1]
        per_gpu: dict[int, Status] = {}
        for status, gpus in self.verdicts:
            for gpu in range(gpu_count or 0) if gpus is None else gpus:
                per_gpu[gpu] = status
        messages = {g.gpu: g.messages for g in test.gpus}
        test.gpus = [GpuResult(gpu=g, status=s, messages=messages.get(g, [])) for g, s in sorted(per_gpu.items())]
        test.status = _overall([s for s, _ in self.verdicts])
        self.verdicts = []


def _gpu_count(meta: dict[str, str]) -> int | None:
    ids = meta.get("GPU Device IDs Detected")
    return len([x for x in ids.split(",") if x.strip()]) if ids else None


def _text(text: str) -> DcgmResult:
    table = _Table()
    errors = [line.strip() for line in text.splitlines() if line.strip().startswith("Error:")]
    for line in text.splitlines():
        table.read(line.rstrip())
    table.close_test(_gpu_count(table.meta))
    return _finish(
        table.tests,
        fmt="text",
        version=table.meta.get("DCGM Version"),
        driver=table.meta.get("Driver Version Detected"),
        gpus=_gpu_count(table.meta),
        errors=errors,
    )


def _verdict(match: re.Match[str]) -> tuple[Status, list[int] | None]:
    status = _status(match[1])
    if match[3]:
        return status, [int(x) for x in match[3].replace(" ", "").split(",") if x]
    return status, None  # "All" or a plain verdict: every GPU


# ------------------------------------------------------------------ JSON
def _json(document: dict[str, Any]) -> DcgmResult:
    diag = document.get("DCGM Diagnostic") or {}
    tests: list[TestResult] = []
    for category in diag.get("test_categories") or []:
        for test in category.get("tests") or []:
            gpus = []
            for result in test.get("results") or []:
                if result.get("entity_group", "GPU") != "GPU":
                    continue
                messages = [str(w.get("warning", "")) for w in result.get("warnings") or []]
                gpus.append(
                    GpuResult(
                        gpu=int(result.get("entity_id", 0)),
                        status=_status(str(result.get("status"))),
                        messages=messages,
                    )
                )
            summary = test.get("test_summary") or {}
            status = (
                _status(str(summary.get("status"))) if summary.get("status") else _overall([g.status for g in gpus])
            )
            tests.append(
                TestResult(
                    category=str(category.get("category", "")),
                    name=str(test.get("name", "")),
                    status=status,
                    gpus=gpus,
                    messages=[str(i) for i in summary.get("info") or []],
                )
            )
    metadata = document.get("metadata") or {}
    entities = [
        e
        for group in document.get("entity_groups") or []
        if group.get("entity_group") == "GPU"
        for e in group.get("entities") or []
    ]
    return _finish(
        tests,
        fmt="json",
        version=metadata.get("version"),
        driver=metadata.get("Driver Version Detected"),
        gpus=len(entities) if entities else None,
        errors=[],
    )


def parse(text: str) -> DcgmResult:
    """Parse ``dcgmi diag`` output (text or JSON); never raises on odd input."""
    start = text.find("{")
    if start >= 0 and "DCGM Diagnostic" in text:
        try:
            document = json.loads(text[start : text.rfind("}") + 1])
        except ValueError as exc:
            return DcgmResult(verdict="error", format="json", errors=[f"invalid JSON: {exc}"])
        if isinstance(document, dict):
            return _json(document)
    return _text(text)
