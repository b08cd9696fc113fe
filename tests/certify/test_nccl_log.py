"""The nccl-tests parser against real outputs and generated tables.

Covers: every sample in reference/samples/nccl gives the values its EXPECTED.md row lists
(average busbw, largest size and its out-of-place busbw, failure, ranks); MPI prefixes,
kubectl timestamps and NCCL noise are ignored; a crash before any row, a crash half-way and a
log cut before its summary are errors; generated tables in both layouts parse back to the
numbers that were printed (property test); the network NCCL chose (``Using network …``) is read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.certify.parsers import nccl_log

SAMPLES = "reference/samples/nccl"


def _expected(team_shared: Path) -> dict[str, dict[str, str]]:
    rows: dict[str, dict[str, str]] = {}
    header: list[str] = []
    for line in (team_shared / SAMPLES / "EXPECTED.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == "file" and "Avg bus bandwidth" in cells:
            header = cells
        elif header and len(cells) == len(header) and cells[0].endswith(".txt"):
            rows[cells[0]] = dict(zip(header, cells, strict=True))
        elif not line.startswith("|"):
            header = [] if rows else header
    return rows


def test_every_real_sample_gives_the_values_its_expected_file_lists(team_shared: Path) -> None:
    expected = _expected(team_shared)
    files = sorted(p.name for p in (team_shared / SAMPLES).glob("*.txt"))
    assert sorted(expected) == files
    for name, row in expected.items():
        result = nccl_log.parse((team_shared / SAMPLES / name).read_text())
        assert result.avg_busbw_gbps == float(row["Avg bus bandwidth"]), name
        assert result.largest_size_bytes == int(row["largest size (B)"]), name
        assert result.largest_busbw_gbps == float(row["oop busbw at largest"]), name
        failed = row["failure?"].strip("*").lower().startswith("yes")
        assert result.verdict == ("fail" if failed else "pass"), name
        ranks = row["ranks (procs x GPUs)"].split()[0]
        assert result.ranks == (int(ranks) if "no `Rank` lines" not in row["ranks (procs x GPUs)"] else None), name


def test_the_gcp_sample_names_its_binary_and_reads_both_halves(team_shared: Path) -> None:
    result = nccl_log.parse((team_shared / SAMPLES / "gcp-a3mega-h100-2node-allreduce.txt").read_text())
    assert result.binary == "all_reduce_perf" and result.layout == "new" and len(result.rows) == 31
    last = result.rows[-1]
    assert (last.redop, last.root, last.out_of_place.wrong, last.in_place.busbw_gbps) == ("sum", -1, 0, 337.35)
    assert result.peak_busbw_gbps == 338.82 and result.peak_algbw_gbps == 180.71


_TABLE = """# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
#  Rank  0 Group  0 Pid   6899 on host-a device  0 [0000:04:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   6733 on host-b device  0 [0000:04:00] NVIDIA H100 80GB HBM3
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
           8             2     float     sum      -1    135.8    0.00    0.00      0    123.5    0.00    0.00      0
          16             4     float     sum      -1    123.2   10.00   20.00      0    122.3    9.00   18.00      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 9.5
"""


def test_mpi_prefixes_timestamps_and_noise_are_ignored() -> None:
    noisy = "\n".join(f"2026-11-29T18:00:00.123456789Z [1,0]<stdout>:{line}" for line in _TABLE.splitlines())
    noisy += "\nhost-a:6899:6899 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\nhost-a:1:1 [0] NCCL WARN slow link\n"
    result = nccl_log.parse(noisy)
    assert result.verdict == "pass" and result.ranks == 2 and result.largest_busbw_gbps == 20.0
    assert result.avg_busbw_gbps == 9.5 and result.warnings == ["host-a:1:1 [0] NCCL WARN slow link"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "#  Rank  0 Group  0 Pid 1 on a device 0 [x] GPU\n"
            "host-a: Test CUDA failure common.cu:1279 'unspecified launch "
            "failure'\n",
            "Test CUDA failure",
        ),
        (
            _TABLE.split("# Out of")[0] + "host-b: Test NCCL failure common.cu:1279 'remote process exited'\n",
            "Test NCCL failure",
        ),
        (_TABLE.split("# Out of")[0], "ends before"),
        ("", "no result rows"),
    ],
    ids=["crash-before-rows", "crash-half-way", "cut-short", "empty"],
)
def test_crashes_and_truncated_logs_are_errors(text: str, error: str) -> None:
    result = nccl_log.parse(text)
    assert result.verdict == "error" and any(error in e for e in result.errors)


def test_a_wrong_count_fails_the_run() -> None:
    result = nccl_log.parse(_TABLE.replace("20.00      0", "20.00      3"))
    assert result.verdict == "fail"


_value = st.floats(min_value=0, max_value=9999, allow_nan=False).map(lambda v: round(v, 2))


@given(
    rows=st.lists(st.tuples(st.integers(0, 2**34), _value, _value, _value, st.integers(0, 5)), min_size=1, max_size=12),
    new=st.booleans(),
)
def test_generated_tables_parse_back_to_the_printed_numbers(
    rows: list[tuple[int, float, float, float, int]], new: bool
) -> None:
    lines = [
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
        "   busbw #wrong"
        if new
        else "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw"
        "  error"
    ]
    for size, time, alg, bus, wrong in rows:
        middle = "     sum      -1" if new else "     sum"
        tail = f"{wrong:5d}" if new else "  N/A"
        half = f"  {time:7.2f}  {alg:6.2f}  {bus:6.2f}  {tail}"
        lines.append(f"{size:12d}  {size // 4:12d}     float{middle}{half}{half}")
    lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 1.5"]
    result = nccl_log.parse("\n".join(lines))
    assert [
        (r.size_bytes, r.out_of_place.time_us, r.out_of_place.algbw_gbps, r.in_place.busbw_gbps) for r in result.rows
    ] == [(s, t, a, b) for s, t, a, b, _ in rows]
    wrong = any(w for *_, w in rows) if new else False
    assert result.verdict == ("fail" if wrong else "pass")
    assert result.peak_busbw_gbps == max(b for _, _, _, b, _ in rows)


def test_a_sweep_that_crashed_half_way_reports_no_bandwidth() -> None:
    from shared.certify import results

    crashed = nccl_log.parse(_TABLE.split("# Out of")[0] + "host-b: Test NCCL failure common.cu:1279 'exited'\n")
    assert crashed.verdict == "error" and crashed.peak_busbw_gbps == 20.0  # the rows before the crash
    assert results.measurements(crashed) == {}
    assert results.measurements(nccl_log.parse(_TABLE))["busBandwidthGBps"] == 20.0


def test_the_network_nccl_chose_is_read_off_its_info_lines() -> None:
    """With NCCL_DEBUG=INFO, NCCL names the network plugin it crosses nodes with; Socket is plain TCP."""
    info = "node-0:41:77 [0] NCCL INFO Using network Socket\n# nccl-tests header\n"
    assert nccl_log.parse(info).network == "Socket"
    assert nccl_log.parse("host:1:2 [0] NCCL INFO Using network AWS Libfabric\n").network == "AWS Libfabric"
    assert nccl_log.parse("# no info lines\n").network is None
