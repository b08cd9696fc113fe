"""The fabric model as workloads see it, through real workloads (MPIJobs across nodes, Jobs) and our parsers.

Covers: over random fault sets and groups, the busbw a Job reports equals the model's formula
(computed here independently from the profile); a link fault slows only groups spanning both
racks; thermal throttling degrades bandwidth and step time; NCCL_P2P/SHM_DISABLE sends a
one-node run through its NICs; GB200 racks are NVLink domains; every log the kubelet emits
(all four collectives, dcgmi diag text and JSON at every level, training, crashes) parses with
the project's parsers, and DCGM JSON validates against NVIDIA's schema.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.certify.parsers import dcgm_diag, nccl_log, training_log
from shared.sim import SimServer
from shared.sim.gpu import fabric, stages
from tests.sim import jobkit

H100 = stages.profile("h100")


def _oracle(
    sim: SimServer, names: list[str], faults: dict[str, float], links: dict[tuple[str, str], float], hot: set[str]
) -> float:
    """The model's busbw, from the documented formula rather than from shared.sim.gpu.fabric."""
    racks = {sim.fabric.nodes[n].rack for n in names}
    thermal = stages.faults().thermal.bandwidthFactor
    if len(names) == 1:
        return H100.bandwidth.nvlinkBusGBps * (thermal if names[0] in hot else 1.0)
    slowest = min(faults.get(n, 1.0) * (thermal if n in hot else 1.0) for n in names)
    link = min([v for (a, b), v in links.items() if a in racks and b in racks], default=1.0)
    return H100.bandwidth.networkBusGBps * slowest * link


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_groups_reported_busbw_equals_the_models(gpu_sim: SimServer, api_client: Any, data: st.DataObject) -> None:
    if not gpu_sim.fabric.nodes:
        gpu_sim.add_gpu_nodes(6, racks=3)
    gpu_sim.fabric.remove(fabric.faultspec.Selector(node=""))
    for fault in list(gpu_sim.fabric.faults):
        gpu_sim.fabric.remove(fabric.faultspec.Selector(node=fault.node, racks=fault.racks))
    names = sorted(gpu_sim.fabric.nodes)
    group = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=4, unique=True), label="group")
    nics = data.draw(st.dictionaries(st.sampled_from(names), st.sampled_from([0.25, 0.4, 0.5, 0.9]), max_size=3))
    hot = data.draw(st.sets(st.sampled_from(names), max_size=2))
    links = data.draw(
        st.dictionaries(
            st.sampled_from([("rack-0", "rack-1"), ("rack-1", "rack-2")]), st.sampled_from([0.3, 0.6]), max_size=2
        )
    )
    specs = [f"{n}:nic={v}" for n, v in nics.items()] + [f"{n}:thermal" for n in hot]
    specs += [f"{a}/{b}:link={v}" for (a, b), v in links.items()]
    gpu_sim.fabric.inject(fabric.parse_all(specs))
    name = f"p-{len(gpu_sim.store.keys(('batch', 'jobs')))}"
    _, log = jobkit.run_mpijob(gpu_sim, api_client, jobkit.mpijob(name, group), seconds=300)
    result = nccl_log.parse(log)
    assert result.verdict == "pass"
    assert result.largest_busbw_gbps == pytest.approx(_oracle(gpu_sim, group, nics, links, hot), abs=0.006)


def test_a_link_fault_slows_only_groups_spanning_both_racks(gpu_sim: SimServer, api_client: Any) -> None:
    names = gpu_sim.add_gpu_nodes(6, racks=3)  # rack-0: 000,001  rack-1: 002,003  rack-2: 004,005
    gpu_sim.fabric.inject(fabric.parse_all(["rack-0/rack-1:link=0.3"]))
    network = H100.bandwidth.networkBusGBps
    measured = {}
    for label, group in {"within": names[0:2], "across": names[1:3], "other": names[2:5]}.items():
        _, log = jobkit.run_mpijob(gpu_sim, api_client, jobkit.mpijob(label, group))
        measured[label] = nccl_log.parse(log).largest_busbw_gbps
    assert measured == {"within": network, "across": pytest.approx(network * 0.3), "other": network}


def test_thermal_throttling_degrades_bandwidth_and_step_time(gpu_sim: SimServer, api_client: Any) -> None:
    names = gpu_sim.add_gpu_nodes(4, racks=1)
    command = ["train-bench", "--model", "nemotron5-8b", "--steps", "10"]
    _, cool = jobkit.run(gpu_sim, api_client, jobkit.group_job("cool", names[:2], command), seconds=3600)
    gpu_sim.fabric.inject(fabric.parse_all([f"{names[2]}:thermal"]))
    _, hot = jobkit.run(gpu_sim, api_client, jobkit.group_job("hot", names[2:], command), seconds=3600)
    before, after = training_log.parse(cool), training_log.parse(hot)
    assert before.verdict == after.verdict == "pass"
    assert after.avg_step_time_s is not None and before.avg_step_time_s is not None
    assert after.avg_step_time_s > before.avg_step_time_s / stages.faults().thermal.computeFactor * 0.99
    _, log = jobkit.run_mpijob(gpu_sim, api_client, jobkit.mpijob("hot-ar", names[2:]))
    assert nccl_log.parse(log).largest_busbw_gbps == pytest.approx(
        H100.bandwidth.networkBusGBps * stages.faults().thermal.bandwidthFactor
    )


def test_a_loopback_run_goes_through_the_nics_of_its_one_node(gpu_sim: SimServer, api_client: Any) -> None:
    names = gpu_sim.add_gpu_nodes(1)
    gpu_sim.fabric.inject(fabric.parse_all([f"{names[0]}:nic[3]=0.5"]))
    _, nvlink = jobkit.run_mpijob(gpu_sim, api_client, jobkit.mpijob("nvl", names))
    _, loop = jobkit.run_mpijob(
        gpu_sim, api_client, jobkit.mpijob("loop", names, env={"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"})
    )
    assert nccl_log.parse(nvlink).largest_busbw_gbps == H100.bandwidth.nvlinkBusGBps
    assert nccl_log.parse(loop).largest_busbw_gbps == H100.bandwidth.networkBusGBps * 0.5


def test_gb200_racks_are_nvlink_domains(gpu_sim: SimServer, api_client: Any) -> None:
    names = gpu_sim.add_gpu_nodes(4, racks=2, gpu="gb200")
    gb200 = stages.profile("gb200")
    _, inside = jobkit.run_mpijob(gpu_sim, api_client, jobkit.mpijob("in", names[:2], gpus=4))
    _, across = jobkit.run_mpijob(gpu_sim, api_client, jobkit.mpijob("out", names[1:3], gpus=4))
    assert nccl_log.parse(inside).largest_busbw_gbps == gb200.bandwidth.nvlinkBusGBps
    assert nccl_log.parse(across).largest_busbw_gbps == gb200.bandwidth.networkBusGBps
    assert nccl_log.parse(inside).ranks == 8


@pytest.mark.parametrize("binary", ["all_reduce_perf", "all_gather_perf", "alltoall_perf", "reduce_scatter_perf"])
def test_every_collective_log_parses_with_its_share_of_the_bandwidth(
    gpu_sim: SimServer, api_client: Any, binary: str
) -> None:
    names = gpu_sim.add_gpu_nodes(2)
    _, log = jobkit.run_mpijob(gpu_sim, api_client, jobkit.mpijob("c", names, binary=binary))
    result = nccl_log.parse(log)
    share = stages.workloads().nccl.collectives[binary].bandwidth
    assert (result.verdict == "pass" and result.binary is None) or result.binary == binary
    assert result.largest_busbw_gbps == pytest.approx(H100.bandwidth.networkBusGBps * share, abs=0.006)
    assert result.avg_busbw_gbps is not None and 0 < result.avg_busbw_gbps < result.largest_busbw_gbps


@pytest.mark.parametrize("level", [1, 2, 3, 4])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_dcgm_diag_logs_parse_and_name_the_faulty_gpus(
    gpu_sim: SimServer, api_client: Any, team_shared: Any, level: int, as_json: bool
) -> None:
    names = gpu_sim.add_gpu_nodes(1)
    gpu_sim.fabric.inject(fabric.parse_all([f"{names[0]}:gpu-dead[2]", f"{names[0]}:thermal[5]"]))
    command = ["dcgmi", "diag", "-r", str(level)] + (["-j"] if as_json else [])
    _job, log = jobkit.run(gpu_sim, api_client, jobkit.group_job("diag", names, command), seconds=4000)
    result = dcgm_diag.parse(log)
    expected = {2: ["NVML Library"] if not as_json else ["software"]}
    if level >= 3:
        expected[5] = ["Targeted Power"] if not as_json else ["targeted_power"]
    assert result.verdict == "fail" and result.gpu_count == 8
    assert {gpu: tests[:1] for gpu, tests in result.failed_gpus.items()} == expected
    pod = jobkit.pods_of(api_client, "diag")[0]
    assert pod.status.container_statuses[0].state.terminated.exit_code == stages.workloads().dcgm.failureExitCode
    if as_json:
        import jsonschema

        schema = json.loads((team_shared / "reference/samples/dcgm/REFERENCE-nvidia-dcgm_diag_schema.json").read_text())
        schema.pop("$schema", None)  # "http://json-schema.org/schema#" names no draft; the schema is draft 7
        jsonschema.Draft7Validator(schema).validate(json.loads(log))


def test_a_healthy_node_passes_dcgm_diag(gpu_sim: SimServer, api_client: Any) -> None:
    names = gpu_sim.add_gpu_nodes(1)
    job, log = jobkit.run(gpu_sim, api_client, jobkit.group_job("ok", names, ["dcgmi", "diag", "-r", "2"]))
    assert dcgm_diag.parse(log).verdict == "pass" and jobkit.condition(job, "Complete") == "True"


def test_training_logs_report_steps_tflops_and_goodput(gpu_sim: SimServer, api_client: Any) -> None:
    names = gpu_sim.add_gpu_nodes(2, racks=2)
    job, log = jobkit.run(
        gpu_sim,
        api_client,
        jobkit.group_job("train", names, ["train-bench", "--model", "nemotron5-8b", "--steps", "20"]),
        seconds=3600,
    )
    result = training_log.parse(log)
    assert jobkit.condition(job, "Complete") == "True"
    assert result.verdict == "pass" and result.world_size == 16 and len(result.steps) == 20
    assert result.goodput is not None and 0.5 < result.goodput < 1.0
    gpu = H100.gpu
    assert result.avg_tflops_per_gpu == pytest.approx(gpu.peakTflops * gpu.mfu, rel=0.01)
