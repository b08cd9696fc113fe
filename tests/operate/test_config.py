"""nvsentinel's whole values file: loaded above health and the lifecycle, checked whole by every command.

Covers: ``load`` returns health's ready configuration and the lifecycle's settings from one file;
a mistake in ``lifecycle-manager`` fails every command that reads ``--values`` (not only the
lifecycle's), with the same one line; with mistakes in both parts the first is health's, as when
one model held the whole file; ``rules check`` reports an unknown key inside ``lifecycle-manager``;
health's loader alone reads its own sections and leaves ``lifecycle-manager`` to this one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import errors
from shared.health import config as hconfig
from shared.operate import config

BAD_LIFECYCLE = "lifecycle-manager:\n  config:\n    maxConcurrentGroups: 0\n"
BAD_BOTH = "fault-quarantine:\n  circuitBreaker:\n    percentage: 500\n" + BAD_LIFECYCLE


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "values.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_one_file_gives_health_its_configuration_and_the_lifecycle_its_settings(tmp_path: Path) -> None:
    path = _file(tmp_path, "global:\n  dryRun: false\nlifecycle-manager:\n  runCertificationController: false\n")
    cfg = config.load(path, enforce=False)
    assert cfg.health.dry_run is True  # --monitor wins over the file
    assert cfg.lifecycle.runCertificationController is False
    assert cfg.source == str(path)
    assert len(cfg.health.engine.rule_sets) == 7


@pytest.mark.parametrize(
    "argv",
    [
        ["rules", "replay", "--events", "/dev/null"],
        ["breaker", "status", "--kubeconfig", "/nonexistent"],
        ["nodes", "release", "node-000", "--kubeconfig", "/nonexistent"],
        ["events", "prune", "--kubeconfig", "/nonexistent"],
        ["validation", "create", "--nodes", "node-000", "--kubeconfig", "/nonexistent"],
    ],
    ids=["rules-replay", "breaker-status", "nodes-release", "events-prune", "validation-create"],
)
def test_a_lifecycle_mistake_fails_every_command_that_reads_the_values(
    run_cli: Any, tmp_path: Path, argv: list[str]
) -> None:
    path = _file(tmp_path, BAD_LIFECYCLE)
    result = run_cli("nvsentinel", *argv, "--values", str(path))
    assert result.code == 2
    assert result.stderr == (
        f"error: {path}: lifecycle-manager.config.maxConcurrentGroups: Input should be greater than or equal to 1\n"
    )


def test_with_mistakes_in_both_parts_the_first_reported_is_healths(tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        config.load(_file(tmp_path, BAD_BOTH))
    assert (
        caught.value.message == "fault-quarantine.circuitBreaker.percentage: Input should be less than or equal to 100"
    )


def test_rules_check_reports_an_unknown_key_inside_the_lifecycle_section(run_cli: Any, tmp_path: Path) -> None:
    path = _file(tmp_path, "lifecycle-manager:\n  bogus: 1\n")
    result = run_cli("nvsentinel", "rules", "check", "--values", str(path))
    assert result.code == 1
    assert result.stderr == (
        f"error: {path}:2:3: unknown field 'bogus' (known: config, enabled, runCertificationController)\n"
    )


def test_healths_loader_reads_its_own_sections_and_leaves_the_lifecycles_alone(tmp_path: Path) -> None:
    cfg = hconfig.load(_file(tmp_path, BAD_LIFECYCLE))
    assert cfg.settings.fault_quarantine.circuitBreaker.percentage == 50
    with pytest.raises(errors.InvalidInput):
        config.load(_file(tmp_path, BAD_LIFECYCLE))
