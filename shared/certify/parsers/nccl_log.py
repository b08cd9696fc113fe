"""nccl-tests output → rows per message size, average and peak bus bandwidth, and a verdict.

Reads both table layouts nccl-tests has printed: the old one (``error`` column, optional
``redop``, no ``root``) and the current one (``redop``, ``root``, ``#wrong``), with the
summary lines ``# Out of bounds values`` / ``# Avg bus bandwidth`` prefixed by ``#`` or a space.
Lines may carry MPI prefixes (``[1,0]<stdout>:``) or the RFC 3339 stamps of ``kubectl logs
--timestamps``; NCCL INFO/WARN noise and interleaved markdown are ignored.

Verdict: ``error`` when the run crashed (a ``Test … failure`` line) or produced no row or no
summary; ``fail`` when values were out of bounds or a ``#wrong`` count is non-zero; else ``pass``.
Bandwidths are GB/s and sizes bytes, as nccl-tests prints them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

Verdict = Literal["pass", "fail", "error"]

_PREFIX = re.compile(r"^(?:\d{4}-\d\d-\d\dT\S+\s)?(?:\[\d+,\d+\]<std(?:out|err)>:)?")
_BINARY = re.compile(
    r"\b((?:all_reduce|all_gather|alltoall|reduce_scatter|broadcast|reduce|sendrecv|scatter|gather|"
    r"hypercube)_perf)(?:_mpi)?\b"
)
_OOB = re.compile(r"^[#\s]*Out of bounds values\s*:\s*(\d+)\s+(OK|FAILED)", re.IGNORECASE)
_AVG = re.compile(r"^[#\s]*Avg bus bandwidth\s*:\s*([-+\d.eE]+)")
_RANK = re.compile(r"^#\s*Rank\s+\d+\b")
_FATAL = re.compile(
    r"Test (?:NCCL |CUDA )?failure|Segmentation fault|core dumped|Aborted \(|"
    r"terminated normally, but|non-zero exit code|mpirun noticed"
)
_WARN = re.compile(r"\bNCCL WARN\b")


class Half(BaseModel):
    """One half of a row (out-of-place or in-place)."""

    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    wrong: int | None = Field(default=None, description="#wrong count (current layout); None when N/A.")
    error: float | None = Field(default=None, description="Max error (old layout); None when N/A.")


class Row(BaseModel):
    size_bytes: int
    count: int
    type: str
    redop: str | None = None
    root: int | None = None
    out_of_place: Half
    in_place: Half


class NcclResult(BaseModel):
    """Everything read off one nccl-tests log."""

    verdict: Verdict
    binary: str | None = None
    ranks: int | None = Field(default=None, description="Rank lines printed (None when the log has none).")
    layout: Literal["old", "new"] | None = None
    rows: list[Row] = Field(default_factory=list)
    avg_busbw_gbps: float | None = None
    peak_busbw_gbps: float | None = Field(default=None, description="Max out-of-place busbw over all sizes.")
    peak_algbw_gbps: float | None = None
    largest_size_bytes: int | None = None
    largest_busbw_gbps: float | None = Field(default=None, description="Out-of-place busbw at the largest size.")
    out_of_bounds: int | None = None
    errors: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    network: str | None = Field(
        default=None,
        description="The network plugin NCCL chose between nodes ('Using network Socket', IB, AWS Libfabric, "
        "FasTrak), printed with NCCL_DEBUG=INFO; Socket means plain TCP.",
    )


_NETWORK = re.compile(r"(?:NCCL INFO )?Using network (\S.*?)\s*$")


def _number(text: str) -> float:
    return float(text)


def _half(tokens: list[str], layout: str) -> Half:
    wrong: int | None = None
    error: float | None = None
    last = tokens[3]
    if last != "N/A":
        if layout == "new" and last.lstrip("-").isdigit():
            wrong = int(last)
        else:
            error = float(last)
    return Half(
        time_us=_number(tokens[0]),
        algbw_gbps=_number(tokens[1]),
        busbw_gbps=_number(tokens[2]),
        wrong=wrong,
        error=error,
    )


def _row(line: str, layout: str | None) -> Row | None:
    tokens = line.split()
    if len(tokens) not in (11, 12, 13) or not tokens[0].isdigit() or not tokens[1].isdigit():
        return None
    middle = tokens[3:-8]
    try:
        redop = root = None
        if len(middle) == 2:
            redop, root = middle[0], int(middle[1])
        elif len(middle) == 1:
            redop = middle[0]
        kind = layout or ("new" if len(middle) == 2 else "old")
        return Row(
            size_bytes=int(tokens[0]),
            count=int(tokens[1]),
            type=tokens[2],
            redop=redop,
            root=root,
            out_of_place=_half(tokens[-8:-4], kind),
            in_place=_half(tokens[-4:], kind),
        )
    except ValueError:
        return None


Layout = Literal["old", "new"]


@dataclass
class _Scan:
    """What the lines of one log said, gathered in one pass."""

    rows: list[Row] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    binary: str | None = None
    layout: Layout | None = None
    ranks: int = 0
    avg: float | None = None
    oob: int | None = None
    oob_failed: bool = False
    network: str | None = None

    def read(self, raw: str) -> None:
        line = _PREFIX.sub("", raw.rstrip())
        if self.binary is None and (found := _BINARY.search(line)):
            self.binary = found[1]
        if self.network is None and (chosen := _NETWORK.search(line)):
            self.network = chosen[1]
        self._classify(line)

    def _classify(self, line: str) -> None:
        """A line is one of: rank, table header, summary, crash, NCCL warning, result row, noise."""
        if _RANK.match(line):
            self.ranks += 1
        elif _is_header(line):
            self.layout = "new" if ("#wrong" in line or "root" in line) else "old"
        elif (match := _OOB.match(line)) is not None:
            self.oob, self.oob_failed = int(match[1]), match[2].upper() == "FAILED"
        elif (match := _AVG.match(line)) is not None:
            self._average(match[1], line)
        elif _FATAL.search(line):
            self.errors.append(line.strip())
        elif _WARN.search(line):
            self.warnings.append(line.strip())
        elif not line.lstrip().startswith("#") and (row := _row(line, self.layout)) is not None:
            self.rows.append(row)

    def _average(self, text: str, line: str) -> None:
        try:
            self.avg = float(text)
        except ValueError:
            self.errors.append(f"unreadable average: {line.strip()}")

    def verdict(self) -> Verdict:
        """``error``/``fail``/``pass``; an ``error`` with no crash line gets its reason in ``errors``."""
        if self.errors:
            return "error"
        if not self.rows:
            self.errors.append("no result rows: the run printed no nccl-tests table")
            return "error"
        if self.avg is None:
            self.errors.append("the log ends before the '# Avg bus bandwidth' summary")
            return "error"
        wrong = any((r.out_of_place.wrong or 0) > 0 or (r.in_place.wrong or 0) > 0 for r in self.rows)
        return "fail" if self.oob_failed or (self.oob or 0) > 0 or wrong else "pass"


def _is_header(line: str) -> bool:
    return "size" in line and "count" in line and line.lstrip().startswith("#")


def parse(text: str) -> NcclResult:
    """Parse a whole log; never raises on odd input (an unreadable log is verdict ``error``)."""
    scan = _Scan()
    for raw in text.splitlines():
        scan.read(raw)
    rows = scan.rows
    if rows and scan.layout is None:
        scan.layout = "new" if rows[0].root is not None else "old"
    verdict = scan.verdict()
    largest = max(rows, key=lambda r: r.size_bytes) if rows else None
    return NcclResult(
        verdict=verdict,
        binary=scan.binary,
        ranks=scan.ranks or None,
        layout=scan.layout if rows else None,
        rows=rows,
        avg_busbw_gbps=scan.avg,
        peak_busbw_gbps=max((r.out_of_place.busbw_gbps for r in rows), default=None),
        peak_algbw_gbps=max((r.out_of_place.algbw_gbps for r in rows), default=None),
        largest_size_bytes=largest.size_bytes if largest else None,
        largest_busbw_gbps=largest.out_of_place.busbw_gbps if largest else None,
        out_of_bounds=scan.oob,
        errors=scan.errors,
        warnings=scan.warnings,
        network=scan.network,
    )
