"""An Open MPI ``mpirun`` command line, read as Open MPI 4 reads it: hosts, ranks, exported env.

The kubelet decides what a launcher container does from its command alone (as a node would run
it), so this module answers: where does the hostfile come from (``--hostfile`` / ``-hostfile`` /
``--machinefile`` / ``--default-hostfile``, ``--mca orte_default_hostfile``, else the env
``OMPI_MCA_orte_default_hostfile`` the operators set; research/workloads.md §1.2 and §3.2), or an
explicit ``-H host[:slots],…``; how many ranks per host (``-N``/``--npernode``/``--map-by
ppr:N:node``, ``-np``, else one per slot, slots from the hostfile line or
``orte_set_default_slots``); may it oversubscribe; and which environment the ranks get (``-x K=V``,
``-x K`` taking the launcher's value — ranks started over ssh inherit nothing else). Options this
model does not use are skipped with their arguments, so the program and its arguments are found
wherever they start. What is left out: rankfiles, app contexts (``:``), MPICH and Intel MPI flags.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BINARIES = ("mpirun", "mpiexec", "orterun")
HOSTFILE_ENV = "OMPI_MCA_orte_default_hostfile"
SLOTS_ENV = "OMPI_MCA_orte_set_default_slots"

_HOSTFILE = {"--hostfile", "-hostfile", "--machinefile", "-machinefile", "--default-hostfile", "-default-hostfile"}
_HOSTS = {"-H", "--host", "-host"}
_PER_NODE = {"-N", "--npernode", "-npernode"}
_TOTAL = {"-np", "--np", "-n", "-c"}
_TWO_ARGS = {"--mca", "-mca", "--gmca", "-gmca"}
_ONE_ARG = {
    "-x",
    "--map-by",
    "-map-by",
    "--bind-to",
    "-bind-to",
    "--rank-by",
    "-rank-by",
    "--prefix",
    "-prefix",
    "--wdir",
    "-wdir",
    "--path",
    "-path",
    "--output-filename",
    "-output-filename",
    "--timeout",
    "-timeout",
    "-am",
    "--am",
    "--preload-files",
    "--cpus-per-proc",
    "-cpus-per-proc",
    "--launch-agent",
    "-launch-agent",
    "--personality",
    "--stdin",
    "-stdin",
    "-tune",
    "--tune",
    "--report-bindings-file",
    *_HOSTFILE,
    *_HOSTS,
    *_PER_NODE,
    *_TOTAL,
}


def index(tokens: list[str]) -> int | None:
    """Where ``mpirun`` (by any of its names and paths) sits in a command, if it does."""
    return next((i for i, t in enumerate(tokens) if t.rsplit("/", 1)[-1] in BINARIES), None)


@dataclass(frozen=True)
class Launch:
    """What one mpirun command line asks for."""

    hostfile: str | None = None
    """Path of the hostfile, from the command line or the environment."""
    hosts: tuple[tuple[str, int | None], ...] = ()
    """``-H`` hosts with their slots (None: one)."""
    per_node: int | None = None
    total: int | None = None
    default_slots: int | None = None
    oversubscribe: bool = False
    exported: dict[str, str] = field(default_factory=dict)
    """The ranks' environment: ``-x`` values."""
    program: tuple[str, ...] = ()
    mca: dict[str, str] = field(default_factory=dict)


def _int(text: str, option: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"mpirun: {option} needs a number, got {text!r}") from None


@dataclass
class _State:
    env: dict[str, str]
    hostfile: str | None = None
    hosts: list[tuple[str, int | None]] = field(default_factory=list)
    per_node: int | None = None
    total: int | None = None
    oversubscribe: bool = False
    exported: dict[str, str] = field(default_factory=dict)
    mca: dict[str, str] = field(default_factory=dict)

    def apply(self, token: str, values: list[str]) -> None:
        """One option and its values."""
        if token in _TWO_ARGS:
            self.mca[values[0]] = values[1]
        elif token == "-x":
            key, sep, value = values[0].partition("=")
            self.exported[key] = value if sep else self.env.get(key, "")
        elif token in _HOSTFILE:
            self.hostfile = values[0]
        elif token in _HOSTS:
            self.hosts += [_host(h) for h in values[0].split(",") if h]
        elif token in _PER_NODE:
            self.per_node = _int(values[0], token)
        elif token in _TOTAL:
            self.total = _int(values[0], token)
        elif token in ("--map-by", "-map-by"):
            parts = values[0].split(":")
            if len(parts) >= 3 and parts[0].lower() == "ppr" and parts[2].lower().startswith("node"):
                self.per_node = _int(parts[1], token)
        elif token in ("--oversubscribe", "-oversubscribe"):
            self.oversubscribe = True


def parse(tokens: list[str], env: dict[str, str]) -> Launch:
    """Read the options after the mpirun token; ``env`` is the launcher container's environment.
    ValueError on an option missing its value or a non-numeric count (mpirun refuses those too)."""
    state = _State(env=env, mca={k.removeprefix("OMPI_MCA_"): v for k, v in env.items() if k.startswith("OMPI_MCA_")})
    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):
        token = tokens[i]
        wants = 2 if token in _TWO_ARGS else 1 if token in _ONE_ARG else 0
        if wants and i + wants >= len(tokens):
            raise ValueError(f"mpirun: option {token} needs {'two values' if wants == 2 else 'a value'}")
        state.apply(token, tokens[i + 1 : i + 1 + wants])
        i += 1 + wants
    slots = state.mca.get("orte_set_default_slots", "")
    return Launch(
        hostfile=state.hostfile or state.mca.get("orte_default_hostfile") or None,
        hosts=tuple(state.hosts),
        per_node=state.per_node,
        total=state.total,
        default_slots=int(slots) if slots.isdigit() else None,
        oversubscribe=state.oversubscribe,
        exported=state.exported,
        program=tuple(tokens[i:]),
        mca=state.mca,
    )


def _host(text: str) -> tuple[str, int | None]:
    name, _, slots = text.partition(":")
    return name, int(slots) if slots.isdigit() else None


@dataclass(frozen=True)
class HostLine:
    host: str
    slots: int | None


def hostfile_lines(text: str) -> list[HostLine]:
    """``<host> [slots=N] [max_slots=M]`` per line, ``#`` comments; a host listed twice adds its slots."""
    found: dict[str, int | None] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        slots: int | None = None
        for word in words[1:]:
            key, _, value = word.partition("=")
            if key in ("slots", "cpu", "count") and value.isdigit():
                slots = int(value)
        host = words[0]
        if host in found:
            found[host] = (found[host] or 1) + (slots or 1)
        else:
            found[host] = slots
    return [HostLine(h, s) for h, s in found.items()]
