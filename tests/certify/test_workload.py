"""WorkloadRun's metric rules and file checks, without a cluster.

Covers: a regex takes its first group (or the whole match); a JSON path reads the last JSON object
of a log with noise around it; a rule that finds nothing, or a non-number, gives no value; a file
with both or neither rule, or a bad CEL threshold, is invalid input.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shared import errors
from shared.certify import workload

LOG = """NCCL INFO Bootstrap
{"partial": 1}
step 10 loss 2.1
{"results": [{"name": "busbw", "value": 351.5}], "verdict": "pass"}
# Avg bus bandwidth    : 146.084
"""


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ({"regex": r"Avg bus bandwidth\s*:\s*([0-9.]+)"}, 146.084),
        ({"regex": r"[0-9]+\.[0-9]{3}"}, 146.084),
        ({"jsonPath": "$.results[0].value"}, 351.5),
        ({"jsonPath": "results[0].value"}, 351.5),
        ({"jsonPath": "$.verdict"}, None),
        ({"jsonPath": "$.results[3].value"}, None),
        ({"regex": "no such line ([0-9]+)"}, None),
    ],
    ids=[
        "regex-group",
        "regex-whole-match",
        "json-path",
        "json-path-without-dollar",
        "json-not-a-number",
        "json-missing-index",
        "regex-no-match",
    ],
)
def test_a_metric_rule_extracts_one_number_or_none(rule: dict[str, str], expected: float | None) -> None:
    assert workload.extract(workload.MetricRule.model_validate(rule), LOG) == expected


FILE = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: WorkloadRun
metadata: {{name: mine}}
spec:
  image: registry.example/me/bench:1
  command: [my-bench]
  metric: {metric}
  threshold: {threshold}
"""


@pytest.mark.parametrize(
    ("metric", "threshold"),
    [
        ("{regex: 'x', jsonPath: '$.a'}", "'value > 1'"),
        ("{name: bw}", "'value > 1'"),
        ("{jsonPath: '$..a'}", "'value > 1'"),
        ("{regex: 'x'}", "'value >'"),
    ],
    ids=["both-rules", "no-rule", "bad-json-path", "bad-cel"],
)
def test_a_bad_workloadrun_file_is_invalid_input(tmp_path: Path, metric: str, threshold: str) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(FILE.format(metric=metric, threshold=threshold), encoding="utf-8")
    with pytest.raises(errors.InvalidInput):
        workload.load_file(path)
