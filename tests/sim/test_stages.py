"""Simulated hardware and lifecycles are data: every shipped file loads and is consistent.

Covers: every profile parses into its model with one PCI bus id per GPU and a rack-wide clique
only where intended; the stage files name only known fault kinds and collectives; an unknown
profile is refused listing the known ones.
"""

from __future__ import annotations

import pytest

from shared.sim.gpu import faultspec, stages


@pytest.mark.parametrize("name", stages.profile_names())
def test_every_profile_loads_with_one_bus_id_per_gpu(name: str) -> None:
    profile = stages.profile(name)
    assert profile.name == name and len(profile.gpu.pciBusIds) == profile.gpu.count
    assert profile.bandwidth.networkBusGBps < profile.bandwidth.nvlinkBusGBps
    assert profile.cliquePerRack == (name == "gb200")


def test_the_stage_files_name_only_known_faults_and_collectives() -> None:
    kinds = {k.value for k in faultspec.Kind}
    assert set(stages.faults().rebootClears) <= kinds and set(stages.faults().resetClears) <= kinds
    assert set(stages.workloads().nccl.collectives) == {
        "all_reduce_perf",
        "all_gather_perf",
        "alltoall_perf",
        "reduce_scatter_perf",
    }
    assert sorted(stages.workloads().dcgm.levelSeconds) == [1, 2, 3, 4]
    assert stages.repair().reboot.downSeconds > 0


def test_an_unknown_profile_is_refused_listing_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: a100, gb200, h100"):
        stages.profile("h300")
