"""The dcgmi diag parser against real outputs and generated tables.

Covers: the DCGM 3.3.8 level-3 text sample (EXPECTED.md: FAIL, GPU Memory fails on all 8 GPUs
with per-GPU cuInit warnings, PCIe / Memory Bandwidth / EUD skipped, persistence-mode info
rebuilt whole from its 45-character cuts); the DCGM 4.2.3 JSON sample (FAIL, test software on
GPU 0, warning error id 29); mixed per-GPU verdicts; dcgmi errors; generated notes of any
length cut at 45 characters come back whole (property test).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from shared.certify.parsers import dcgm_diag

SAMPLES = "reference/samples/dcgm"


def test_the_dcgm3_text_sample_gives_its_expected_values(team_shared: Path) -> None:
    result = dcgm_diag.parse((team_shared / SAMPLES / "nccl-tests-issue264-dcgm3.3.8-r3-h100x8-fail.txt").read_text())
    assert (result.verdict, result.format, result.dcgm_version, result.driver_version, result.gpu_count) == (
        "fail",
        "text",
        "3.3.8",
        "560.35.03",
        8,
    )
    assert result.failed_tests == ["GPU Memory"]
    assert result.failed_gpus == {gpu: ["GPU Memory"] for gpu in range(8)}
    status = {t.name: t.status for t in result.tests}
    assert status["PCIe"] == status["Memory Bandwidth"] == status["EUD Test"] == "skip"
    assert status["Persistence Mode"] == "pass"
    memory = next(t for t in result.tests if t.name == "GPU Memory")
    assert memory.gpus[3].messages[0].startswith("GPU 3 Error using CUDA API cuInit")
    assert memory.gpus[3].messages[0].endswith("Refer to https://github.com/nvidia/cuda-samples")
    info = next(t for t in result.tests if t.name == "Persistence Mode").messages[0]
    assert 'Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root.' in info
    assert info.endswith("Persistence mode for GPU 4 is disabled. Enable pers")


def test_the_dcgm4_json_sample_gives_its_expected_values(team_shared: Path) -> None:
    result = dcgm_diag.parse((team_shared / SAMPLES / "dcgm4.2.3-gb10-r1-j-software-fail.json").read_text())
    assert (result.verdict, result.format, result.dcgm_version, result.driver_version, result.gpu_count) == (
        "fail",
        "json",
        "4.2.3",
        "580.82.09",
        1,
    )
    assert result.failed_tests == ["software"] and result.failed_gpus == {0: ["software"]}
    assert result.tests[0].category == "Deployment"
    assert result.tests[0].gpus[0].messages[0].startswith("Persistence Mode: Persistence mode for GPU 0 is disabled")


_MIXED = """+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Metadata  ----------+------------------------------------------------|
| GPU Device IDs Detected   | 2330,2330,2330,2330                            |
|-----  Deployment  --------+------------------------------------------------|
| Denylist                  | Pass                                           |
+-----  Hardware  ----------+------------------------------------------------+
| GPU Memory                | Pass - GPUs: 0, 1, 3                           |
|                           | Fail - GPU: 2                                  |
| Warning                   | GPU 2 Detected XID 48 for GPU 2                |
| Diagnostic                | Warn - All                                     |
+---------------------------+------------------------------------------------+
"""


def test_mixed_per_gpu_verdicts_name_the_failing_gpu_only() -> None:
    result = dcgm_diag.parse(_MIXED)
    assert result.verdict == "fail" and result.failed_gpus == {2: ["GPU Memory"]}
    memory = result.tests[1]
    assert [(g.gpu, g.status) for g in memory.gpus] == [(0, "pass"), (1, "pass"), (2, "fail"), (3, "pass")]
    assert memory.gpus[2].messages == ["GPU 2 Detected XID 48 for GPU 2"]
    assert result.tests[2].name == "Diagnostic" and result.tests[2].status == "warn"


def test_a_dcgmi_error_or_nothing_readable_is_an_error() -> None:
    failed = dcgm_diag.parse(
        "Error: Unable to complete diagnostic for group 0. Return: (-15) Host engine connection invalid/disconnected.\n"
    )
    assert failed.verdict == "error" and failed.errors[0].startswith("Error: Unable to complete")
    assert dcgm_diag.parse("").verdict == "error"
    assert dcgm_diag.parse('{"DCGM Diagnostic": ').verdict == "error"


@given(
    st.text(
        alphabet=st.characters(min_codepoint=32, max_codepoint=126, exclude_characters="|"), min_size=1, max_size=300
    ).filter(lambda t: t.strip() == t and not t.startswith(("Pass", "Fail", "Skip", "Warn")))
)
def test_notes_cut_every_45_characters_come_back_whole(message: str) -> None:
    chunks = [message[i : i + 45] for i in range(0, len(message), 45)]
    rows = [f"| {'Info':<25} | {chunks[0]:<46} |"] + [f"| {'':<25} | {c:<46} |" for c in chunks[1:]]
    text = _MIXED.replace(
        "| Diagnostic                | Warn - All", "\n".join(rows) + "\n| Diagnostic                | Warn - All"
    )
    assert dcgm_diag.parse(text).tests[1].messages == [message]
