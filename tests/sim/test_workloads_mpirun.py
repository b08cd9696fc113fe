"""How the kubelet reads an mpirun command line, a hostfile and a ``timeout`` wrapper.

Covers, as Open MPI 4 reads them: over generated command lines, the hostfile, ``-H`` hosts, ranks
per node (``-N``, ``--npernode``, ``--map-by ppr:N:node``), ``-np``, ``--oversubscribe`` and the
``-x`` exports are recovered whatever other options sit between, and the program starts where
the options end; the hostfile falls back to ``--mca orte_default_hostfile`` and then to the
operators' ``OMPI_MCA_orte_default_hostfile`` env, default slots to ``OMPI_MCA_orte_set_default_slots``;
``-x K`` takes the launcher's value; an option missing its value is refused; hostfile lines with
comments, missing slots and repeated hosts; ``timeout`` durations with units and options; NVCRE's
rendered launcher command classifies as an NCCL test under mpirun.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from shared.sim.gpu import mpirun, workloads

_NAME = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
_NOISE = st.sampled_from(
    [
        ["--allow-run-as-root"],
        ["--bind-to", "none"],
        ["--mca", "plm_rsh_args", "-o StrictHostKeyChecking=no"],
        ["--mca", "pml", "ob1"],
        ["--prefix", "/opt/amazon/openmpi"],
        ["--tag-output"],
        ["--report-bindings"],
    ]
)


@given(
    hostfile=st.one_of(st.none(), st.just("/etc/mpi/hostfile")),
    per_node=st.one_of(st.none(), st.integers(1, 16)),
    form=st.sampled_from(["-N", "--npernode", "ppr"]),
    total=st.one_of(st.none(), st.integers(1, 64)),
    exported=st.dictionaries(st.from_regex(r"[A-Z][A-Z_]{0,10}", fullmatch=True), _NAME, max_size=4),
    noise=st.lists(_NOISE, max_size=4),
    oversubscribe=st.booleans(),
)
def test_the_options_are_recovered_whatever_sits_between_them(
    hostfile: str | None,
    per_node: int | None,
    form: str,
    total: int | None,
    exported: dict[str, str],
    noise: list[list[str]],
    oversubscribe: bool,
) -> None:
    parts: list[list[str]] = [*noise]
    if hostfile:
        parts.append(["--hostfile", hostfile])
    if per_node is not None:
        parts.append(["--map-by", f"ppr:{per_node}:node"] if form == "ppr" else [form, str(per_node)])
    if total is not None:
        parts.append(["-np", str(total)])
    parts += [["-x", f"{k}={v}"] for k, v in exported.items()]
    if oversubscribe:
        parts.append(["--oversubscribe"])
    program = ["/usr/local/bin/all_reduce_perf_mpi", "-b", "8", "-N", "1"]
    launch = mpirun.parse([t for part in parts for t in part] + program, {})
    assert launch.hostfile == hostfile
    assert launch.per_node == per_node and launch.total == total
    assert launch.exported == exported and launch.oversubscribe == oversubscribe
    assert launch.program == tuple(program)


def test_the_hostfile_and_slots_fall_back_to_mca_then_to_the_operators_env() -> None:
    env = {"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile", "OMPI_MCA_orte_set_default_slots": "8"}
    launch = mpirun.parse(["prog"], env)
    assert (launch.hostfile, launch.default_slots) == ("/etc/mpi/hostfile", 8)
    launch = mpirun.parse(["--mca", "orte_default_hostfile", "/tmp/hosts", "prog"], env)
    assert launch.hostfile == "/tmp/hosts"
    assert mpirun.parse(["prog"], {}).hostfile is None


def test_an_export_without_a_value_takes_the_launchers() -> None:
    launch = mpirun.parse(["-x", "LD_LIBRARY_PATH", "-x", "MISSING", "prog"], {"LD_LIBRARY_PATH": "/opt/lib"})
    assert launch.exported == {"LD_LIBRARY_PATH": "/opt/lib", "MISSING": ""}


def test_explicit_hosts_carry_their_slots() -> None:
    launch = mpirun.parse(["-H", "a:8,b", "prog"], {})
    assert launch.hosts == (("a", 8), ("b", None))


def test_an_option_missing_its_value_or_a_count_that_is_no_number_is_refused() -> None:
    for tokens in (["-np"], ["--mca", "pml"], ["-N", "eight", "prog"]):
        try:
            mpirun.parse(tokens, {})
        except ValueError as exc:
            assert str(exc).startswith("mpirun: ")
        else:
            raise AssertionError(f"{tokens} was accepted")


@given(
    st.lists(
        st.tuples(_NAME, st.one_of(st.none(), st.integers(1, 64))), min_size=1, max_size=8, unique_by=lambda h: h[0]
    )
)
def test_hostfile_lines_round_trip(hosts: list[tuple[str, int | None]]) -> None:
    text = "# generated\n\n" + "".join(f"{h} slots={s}  # rack\n" if s else f"{h}\n" for h, s in hosts)
    assert [(line.host, line.slots) for line in mpirun.hostfile_lines(text)] == hosts


def test_a_host_listed_twice_adds_its_slots() -> None:
    assert mpirun.hostfile_lines("a slots=4\nb\na slots=4\n") == [mpirun.HostLine("a", 8), mpirun.HostLine("b", None)]


def test_timeout_durations() -> None:
    assert workloads.deadline(["timeout", "3600", "mpirun"]) == 3600
    assert workloads.deadline(["timeout", "-k", "10", "--preserve-status", "2m", "x"]) == 120
    assert workloads.deadline(["/usr/bin/timeout", "1.5h", "x"]) == 5400
    assert workloads.deadline(["mpirun", "x"]) is None


def test_nvcres_launcher_command_is_an_nccl_test_under_mpirun() -> None:
    """research/workloads.md §4.2: command [timeout, 3600, mpirun], args with -x and the test."""
    container = {
        "command": ["timeout", "3600", "/usr/local/mpi/bin/mpirun"],
        "args": [
            "-N",
            "8",
            "--allow-run-as-root",
            "--mca",
            "plm_rsh_args",
            "-o StrictHostKeyChecking=no",
            "-x",
            "NCCL_DEBUG=INFO",
            "-x",
            "NCCL_MNNVL_ENABLE=0",
            "/usr/local/bin/all_reduce_perf_mpi",
            "-b",
            "8",
            "-e",
            "8G",
            "-f",
            "2",
            "-n",
            "20",
            "-N",
            "1",
        ],
        "env": [{"name": "OMPI_MCA_orte_default_hostfile", "value": "/etc/mpi/hostfile"}],
    }
    found = workloads.classify(container)
    assert found.kind is workloads.Kind.NCCL and found.binary == "all_reduce_perf"
    assert found.launch is not None and found.has_hosts and found.launch.per_node == 8
    assert found.launch.exported == {"NCCL_DEBUG": "INFO", "NCCL_MNNVL_ENABLE": "0"}
    assert found.deadline == 3600
    worker = {"command": ["sh", "-c", "mkdir -p /var/run/sshd && exec /usr/sbin/sshd -De"]}
    assert workloads.classify(worker).kind is workloads.Kind.SSHD
