"""The bad-input corpus as data: what a careless or hostile user hands the three programs.

Each :class:`Case` is a program, its arguments, the files to lay out in a fresh folder (the child
runs there, so messages name relative paths), the exit status docs/troubleshooting.md documents
for it and a substring of the one stderr line that names the culprit (file, field or rule). Two
kinds of rows make it up:

- the input layer's refusals, crossed with every file-reading entry point (:data:`READERS`): a 50 MB
  file, a missing file, a directory, an unreadable file, a symlink loop, bytes that are not UTF-8, a
  NUL byte, and for YAML and JSON a syntax error, nesting past 100 levels, a top level of the wrong
  shape and, for YAML, an alias bomb (:func:`layer_cases`);
- refusals of what a file or flag says (:data:`FIELD_CASES`): unknown fields, values outside their
  grammar (shell metacharacters in a chart, version, source or image), labels, taints, selectors
  and node names Kubernetes would refuse, state files that are not a JSON object, outputs that
  cannot be written, bad flag values.

Programs that need a cluster are given one that refuses connections (tests/badinput/runner.py);
every case here fails before it would be contacted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final


class Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


BIG: Final = Marker("BIG")
"""A link to the session's 50 MB file (valid YAML lines, so only its size is wrong)."""
DIRECTORY: Final = Marker("DIRECTORY")
LOOP: Final = Marker("LOOP")
"""A symlink pointing at a symlink pointing back."""
READ_ONLY_DIR: Final = Marker("READ_ONLY_DIR")
ABSENT: Final = Marker("ABSENT")
"""Removes a file the case's other contents (a bundle) would have."""


@dataclass(frozen=True)
class FromBase:
    """One of :data:`BASES` (or the kit's ``recipe``), with ``replace`` pairs applied once each."""

    base: str
    replace: tuple[tuple[str, str], ...] = ()
    append: str = ""


@dataclass(frozen=True)
class Unreadable:
    data: bytes = b"a: 1\n"


@dataclass(frozen=True)
class Bundle:
    """A copy of the bundle the kit wrote, with some files replaced."""

    files: Mapping[str, Content] = field(default_factory=dict)


@dataclass(frozen=True)
class Fifo:
    pass


Content = bytes | str | FromBase | Unreadable | Bundle | Fifo | Marker


@dataclass(frozen=True)
class Case:
    id: str
    program: str
    args: tuple[str, ...]
    files: Mapping[str, Content]
    exit: int
    culprit: str
    category: str
    stdin: str | None = None
    """A file of the case to give as stdin."""
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def needs_modes(self) -> bool:
        """Whether a file mode is what refuses the case (so root must not run it)."""
        return any(isinstance(c, Unreadable) or c is READ_ONLY_DIR for c in self.files.values())


EVENT = (
    '{"agent": "syslog-health-monitor", "checkName": "SysLogsXIDError", "isFatal": true, '
    '"errorCode": ["79"], "nodeName": "node-001"}\n'
)
BASES: Final[dict[str, str]] = {
    "criteria": "kind: RecipeCriteria\napiVersion: aicr.run/v1alpha2\nspec:\n  service: eks\n  accelerator: h100\n",
    "snapshot": (
        "kind: Snapshot\napiVersion: aicr.run/v1alpha2\nmeasurements:\n  - type: K8s\n    subtypes:\n"
        "      - subtype: server\n        data: {version: v1.31.0}\n"
    ),
    "drift": (
        "kind: DriftReport\napiVersion: aicr.run/v1alpha2\nbaseline: a.yaml\ntarget: b.yaml\n"
        "summary: {added: 0, removed: 0, modified: 1, ignored: 0, total: 1}\n"
        "changes:\n  - kind: modified\n    path: GPU.driver.version\n    baseline: '570.1'\n    target: '570.2'\n"
        "    nodes: [node-001]\n"
    ),
    "cert": (
        "apiVersion: nvcre.nvidia.com/v1alpha1\nkind: Certification\nmetadata: {name: rack-7}\nspec:\n"
        "  maxBytes: 1G\n  target: {nodeSelector: {pool: a}}\n  categories:\n"
        "    - {domain: diagnostics, variant: dcgm-l1}\n"
    ),
    "workloadrun": (
        "apiVersion: nvcre.nvidia.com/v1alpha1\nkind: WorkloadRun\nmetadata: {name: bench}\nspec:\n"
        "  image: registry.example/me/nccl-bench:1\n"
        '  command: [sh, -c, "all_reduce_perf -b 1G -e 8G -f 2 -g 1"]\n'
        "  metric: {name: busbw, regex: 'Avg bus bandwidth\\s*:\\s*([0-9.]+)'}\n"
        "  threshold: 'value >= 450'\n  timeout: 30m\n"
    ),
    "values": "global:\n  dryRun: true\n",
    "chart-values": "global:\n  dryRun: true\n",
    "event": EVENT,
    "nodes": '{"kind": "NodeList", "apiVersion": "v1", "items": []}\n',
    "dcgm": '{"gpus": []}\n',
    "kernlog": "[  1.0] ok\n",
    "nccl": "#  Avg bus bandwidth    : 400.5\n",
}

ALIAS_BOMB: Final = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]" for p, n in zip("abcdefgh", "bcdefghi", strict=True)]
)
"""The billion laughs: 9 levels of 9 aliases, 342 bytes that would expand to 9**9 strings."""
DEEP_YAML: Final = "a: " + "[" * 5000 + "]" * 5000 + "\n"
DEEP_JSON: Final = '{"a": ' + "[" * 5000 + "]" * 5000 + "}\n"
NOT_UTF8: Final = b"kind: \xff\xfe\n"
NUL: Final = b"kind: a\x00b\n"


@dataclass(frozen=True)
class Reader:
    """One entry point that reads a file: the argument ``{file}`` is replaced by the file under test."""

    id: str
    program: str
    args: tuple[str, ...]
    file: str
    format: str
    """yaml, json or text: which malformed contents apply."""
    shape: str
    """Part of the message for a top level of the wrong shape (yaml/json), '' when not applicable."""
    others: Mapping[str, Content] = field(default_factory=dict)
    content_exit: int = 2
    """Exit for bad content (syntax, nesting, aliases, shape): 2, or 1 where the command is a checker."""
    missing: str | None = ""
    """The culprit when the file is absent ('' for the layer's own line, None: absent is valid)."""
    loop: bool = False
    """Whether to add a symlink loop (the same path in the layer as a directory; a few readers suffice)."""


RECIPE_FILE: Final = {"recipe.yaml": FromBase("recipe")}
STATE_ARGS: Final = ("--node", "n1", "--file", "dcgm.json", "--dry-run", "--state", "{file}")

READERS: Final[tuple[Reader, ...]] = (
    Reader(
        "recipe-criteria",
        "aicr",
        ("recipe", "-c", "{file}"),
        "criteria.yaml",
        "yaml",
        "RecipeCriteria mapping",
        loop=True,
    ),
    Reader(
        "recipe-snapshot", "aicr", ("recipe", "--service", "eks", "-s", "{file}"), "snapshot.yaml", "yaml", "Snapshot"
    ),
    Reader("bundle-recipe", "aicr", ("bundle", "-r", "{file}", "-o", "out"), "recipe.yaml", "yaml", "RecipeResult"),
    Reader(
        "validate-recipe",
        "aicr",
        ("validate", "-r", "{file}", "-s", "snapshot.yaml"),
        "recipe.yaml",
        "yaml",
        "RecipeResult",
        {"snapshot.yaml": FromBase("snapshot")},
    ),
    Reader(
        "validate-snapshot",
        "aicr",
        ("validate", "-r", "recipe.yaml", "-s", "{file}"),
        "snapshot.yaml",
        "yaml",
        "Snapshot",
        RECIPE_FILE,
    ),
    Reader(
        "diff-baseline",
        "aicr",
        ("diff", "-b", "{file}", "--target", "snapshot.yaml"),
        "baseline.yaml",
        "yaml",
        "",
        {"snapshot.yaml": FromBase("snapshot")},
    ),
    Reader(
        "diff-target",
        "aicr",
        ("diff", "-b", "recipe.yaml", "--target", "{file}"),
        "target.yaml",
        "yaml",
        "Snapshot",
        RECIPE_FILE,
    ),
    Reader(
        "verify-checksums",
        "aicr",
        ("verify", "bundle"),
        "bundle/checksums.txt",
        "text",
        "",
        {"bundle": Bundle()},
        missing="bundle: not a bundle: checksums.txt is missing",
        loop=True,
    ),
    Reader(
        "snapshot-kubeconfig",
        "aicr",
        ("snapshot", "--kubeconfig", "{file}"),
        "kubeconfig",
        "yaml",
        "",
        missing="kubeconfig: kubeconfig file does not exist",
        loop=True,
    ),
    Reader(
        "certification-run", "nvcrectl", ("certification", "run", "-f", "{file}"), "cert.yaml", "yaml", "Certification"
    ),
    Reader("workloadrun-run", "nvcrectl", ("workloadrun", "run", "-f", "{file}"), "run.yaml", "yaml", "WorkloadRun"),
    Reader("results-nccl", "nvcrectl", ("results", "parse", "--kind", "nccl", "{file}"), "nccl.log", "text", ""),
    Reader("results-dcgm", "nvcrectl", ("results", "parse", "--kind", "dcgm", "{file}"), "dcgm.json", "text", ""),
    Reader(
        "results-training", "nvcrectl", ("results", "parse", "--kind", "training", "{file}"), "train.log", "text", ""
    ),
    Reader("nvcre-manifests-values", "nvcrectl", ("manifests", "-f", "{file}"), "values.yaml", "yaml", "mapping"),
    Reader(
        "events-publish",
        "nvsentinel",
        ("events", "publish", "-f", "{file}"),
        "events.json",
        "json",
        "HealthEvent",
        loop=True,
    ),
    Reader("rules-check", "nvsentinel", ("rules", "check", "-f", "{file}"), "values.yaml", "yaml", "mapping", {}, 1),
    Reader(
        "rules-replay-values",
        "nvsentinel",
        ("rules", "replay", "-f", "{file}", "--events", "events.json"),
        "values.yaml",
        "yaml",
        "mapping",
        {"events.json": FromBase("event")},
    ),
    Reader(
        "rules-replay-events",
        "nvsentinel",
        ("rules", "replay", "-f", "values.yaml", "--events", "{file}"),
        "events.json",
        "json",
        "HealthEvent",
        {"values.yaml": FromBase("values")},
    ),
    Reader(
        "rules-replay-nodes",
        "nvsentinel",
        ("rules", "replay", "-f", "values.yaml", "--events", "events.json", "--nodes", "{file}"),
        "nodes.json",
        "json",
        "",
        {"values.yaml": FromBase("values"), "events.json": FromBase("event")},
    ),
    Reader(
        "monitor-xid",
        "nvsentinel",
        ("monitor", "xid", "--node", "n1", "--file", "{file}", "--dry-run"),
        "kern.log",
        "text",
        "",
    ),
    Reader(
        "monitor-dcgm",
        "nvsentinel",
        ("monitor", "dcgm", "--node", "n1", "--file", "{file}", "--dry-run"),
        "dcgm.json",
        "json",
        "",
    ),
    Reader(
        "monitor-dcgm-state",
        "nvsentinel",
        ("monitor", "dcgm", *STATE_ARGS),
        "state.json",
        "json",
        "must be a JSON object",
        {"dcgm.json": FromBase("dcgm")},
        missing=None,
        loop=True,
    ),
    Reader(
        "validation-nodes-from",
        "nvsentinel",
        ("validation", "create", "--nodes-from", "{file}"),
        "drift.yaml",
        "yaml",
        "DriftReport",
    ),
    Reader("run-values", "nvsentinel", ("run", "-f", "{file}"), "values.yaml", "yaml", "mapping"),
)

_LAYER: Final[tuple[tuple[str, Content, str], ...]] = (
    # (category, content, culprit after "FILE: "); content None means the file is absent.
    ("size-50MB", BIG, "input is 52428800 bytes, more than the limit of 33554432 bytes"),
    ("directory", DIRECTORY, "is a directory, expected a file"),
    ("unreadable", Unreadable(), ""),
    ("not-utf8", NOT_UTF8, "not UTF-8 text: byte 0xff at offset 6 (line 1)"),
    ("nul-byte", NUL, "binary data: NUL byte at offset 7 (line 1)"),
)
_CONTENT: Final[dict[str, tuple[tuple[str, str, str], ...]]] = {
    "yaml": (
        ("alias-bomb", ALIAS_BOMB, ":4: invalid YAML: document contains excessive aliasing"),
        ("deep-nesting", DEEP_YAML, ":1: invalid YAML: nested deeper than 100 levels"),
        ("syntax", "kind: [a, b\n", ":1: invalid YAML:"),
    ),
    "json": (
        ("deep-nesting", DEEP_JSON, ": JSON nested deeper than 100 levels"),
        ("syntax", '{"kind": ', ":1: not JSON"),
    ),
    "text": (),
}


def _reader_case(reader: Reader, category: str, content: Content, culprit: str, exit_code: int) -> Case:
    files = {**reader.others, reader.file: content}
    args = tuple(a.replace("{file}", reader.file) for a in reader.args)
    return Case(f"{reader.id}-{category}", reader.program, args, files, exit_code, culprit, category)


def layer_cases() -> Iterator[Case]:
    """Every reader against every refusal of the input layer that applies to its format."""
    for reader in READERS:
        if reader.missing is not None:
            culprit = reader.missing or f"{reader.file}: file does not exist"
            yield _reader_case(reader, "missing", ABSENT, culprit, 2)
        for category, content, culprit in _LAYER:
            # An unreadable file is refused by the option's own check or by the layer, in its words.
            yield _reader_case(reader, category, content, f"{reader.file}: {culprit}" if culprit else reader.file, 2)
        if reader.loop:
            yield _reader_case(reader, "symlink-loop", LOOP, "Too many levels of symbolic links", 2)
        for category, text, culprit in _CONTENT[reader.format]:
            yield _reader_case(reader, category, text, f"{reader.file}{culprit}", reader.content_exit)
        if reader.shape:
            yield _reader_case(reader, "wrong-shape", "[1, 2]\n", f"{reader.file}", reader.content_exit)


def _bundle(
    id: str, args: tuple[str, ...], culprit: str, category: str, *, output: str = "out", **files: Content
) -> Case:
    command = ("bundle", "-r", "recipe.yaml", "-o", output, *args)
    return Case(id, "aicr", command, {**RECIPE_FILE, **files}, 2, culprit, category)


def _recipe_edit(id: str, old: str, new: str, culprit: str, category: str) -> Case:
    return Case(
        id,
        "aicr",
        ("bundle", "-r", "recipe.yaml", "-o", "out"),
        {"recipe.yaml": FromBase("recipe", ((old, new),))},
        2,
        culprit,
        category,
    )


def _cert(id: str, old: str, new: str, culprit: str, category: str, *, command: str = "run") -> Case:
    return Case(
        id,
        "nvcrectl",
        ("certification", command, "-f", "cert.yaml"),
        {"cert.yaml": FromBase("cert", ((old, new),))},
        2,
        culprit,
        category,
    )


def _event(id: str, event: str, culprit: str, category: str) -> Case:
    return Case(
        id, "nvsentinel", ("events", "publish", "-f", "events.json"), {"events.json": event}, 2, culprit, category
    )


CHART = "chart: gpu-operator\n"
VERSION = "version: v25.10.1\n"
SOURCE = "source: https://helm.ngc.nvidia.com/nvidia\n"

FIELD_CASES: Final[tuple[Case, ...]] = (
    # aicr: recipes whose fields the real consumer (Helm, a shell, the API server) would refuse.
    _recipe_edit(
        "recipe-unknown-field",
        "valuesFile:",
        "overides: {}\n    valuesFile:",
        "componentRefs[0].overides: unknown field",
        "unknown-field",
    ),
    _recipe_edit(
        "recipe-unknown-top-field",
        "constraints:",
        "extra: 1\nconstraints:",
        "extra: unknown field 'extra'",
        "unknown-field",
    ),
    _recipe_edit(
        "recipe-chart-semicolon",
        CHART,
        "chart: gpu-operator; reboot\n",
        "componentRefs[3].chart: invalid chart name",
        "grammar",
    ),
    _recipe_edit(
        "recipe-chart-subshell", CHART, "chart: $(id)\n", "componentRefs[3].chart: invalid chart name", "grammar"
    ),
    _recipe_edit(
        "recipe-chart-upper", CHART, "chart: GPU-Operator\n", "componentRefs[3].chart: invalid chart name", "grammar"
    ),
    _recipe_edit(
        "recipe-version-semicolon",
        VERSION,
        "version: 'v25.10.1; reboot'\n",
        "componentRefs[3].version: invalid chart version",
        "grammar",
    ),
    _recipe_edit(
        "recipe-version-backtick",
        VERSION,
        "version: '`id`'\n",
        "componentRefs[3].version: invalid chart version",
        "grammar",
    ),
    _recipe_edit(
        "recipe-version-space",
        VERSION,
        "version: 25 10 1\n",
        "componentRefs[3].version: invalid chart version",
        "grammar",
    ),
    _recipe_edit(
        "recipe-source-ampersand",
        SOURCE,
        "source: 'https://x.example/a&&reboot'\n",
        "componentRefs[3].source: invalid chart source",
        "grammar",
    ),
    _recipe_edit(
        "recipe-source-quote",
        SOURCE,
        'source: "https://x.example/a\'b"\n',
        "componentRefs[3].source: invalid chart source",
        "grammar",
    ),
    _recipe_edit(
        "recipe-source-scheme",
        SOURCE,
        "source: 'file:///etc'\n",
        "componentRefs[3].source: invalid chart source",
        "grammar",
    ),
    _recipe_edit(
        "recipe-source-newline",
        SOURCE,
        'source: "https://x.example/a\\nreboot"\n',
        "componentRefs[3].source: invalid chart source",
        "grammar",
    ),
    _recipe_edit(
        "recipe-namespace-bad",
        "namespace: gpu-operator\n",
        "namespace: ../gpu\n",
        "namespace '../gpu' is not a DNS-1123 label",
        "grammar",
    ),
    _recipe_edit(
        "recipe-kind-wrong", "kind: RecipeResult", "kind: Recipe", "kind: expected kind RecipeResult", "wrong-kind"
    ),
    _recipe_edit("recipe-component-type", "type: Helm", "type: Shell", "componentRefs[0].type", "enum"),
    _bundle(
        "bundle-system-selector-value",
        ("--system-node-selector", "pool=a b"),
        "--system-node-selector: invalid label value 'a b'",
        "label",
    ),
    _bundle("bundle-system-selector-key", ("--system-node-selector", "bad key=x"), "--system-node-selector", "label"),
    _bundle("bundle-system-selector-no-eq", ("--system-node-selector", "pool"), "--system-node-selector", "label"),
    _bundle(
        "bundle-accelerated-selector-value",
        ("--accelerated-node-selector", "nvidia.com/gpu.present=$(id)"),
        "--accelerated-node-selector",
        "label",
    ),
    _bundle(
        "bundle-toleration-effect",
        ("--accelerated-node-toleration", "nvidia.com/gpu=present:Sometimes"),
        "--accelerated-node-toleration",
        "taint",
    ),
    _bundle(
        "bundle-toleration-value",
        ("--accelerated-node-toleration", "nvidia.com/gpu=a b:NoSchedule"),
        "--accelerated-node-toleration",
        "taint",
    ),
    _bundle(
        "bundle-system-toleration-key",
        ("--system-node-toleration", "-bad:NoSchedule"),
        "--system-node-toleration",
        "taint",
    ),
    _bundle("bundle-workload-gate", ("--workload-gate", "gate=x;y:NoSchedule"), "--workload-gate", "taint"),
    _bundle("bundle-workload-selector", ("--workload-selector", "a=b=c"), "--workload-selector", "label"),
    _bundle(
        "bundle-repo-semicolon", ("-d", "argocd", "--repo", "https://git.example/r.git; reboot"), "--repo", "grammar"
    ),
    _bundle("bundle-repo-scheme", ("-d", "argocd", "--repo", "javascript:alert(1)"), "--repo", "grammar"),
    _bundle("bundle-set-unknown-component", ("--set", "nope:a=1"), "--set 'nope:a=1'", "flag"),
    _bundle("bundle-set-no-path", ("--set", "gpu-operator"), "--set", "flag"),
    _bundle("bundle-deployer-unknown", ("-d", "ansible"), "--deployer: invalid deployer 'ansible'", "flag"),
    _bundle("bundle-nodes-negative", ("--nodes", "-1"), "--nodes: invalid nodes count -1", "flag"),
    _bundle(
        "bundle-output-is-file",
        (),
        "out: output exists and is not a directory",
        "output-unwritable",
        out="a file\n",
    ),
    _bundle(
        "bundle-output-under-a-file",
        (),
        "recipe.yaml: is a file, expected an output folder",
        "output-unwritable",
        output="recipe.yaml/out",
    ),
    _bundle(
        "bundle-output-read-only", (), "ro/out: cannot write", "output-unwritable", output="ro/out", ro=READ_ONLY_DIR
    ),
    _bundle(
        "bundle-output-missing-folder",
        (),
        "missing: output folder does not exist",
        "output-unwritable",
        output="missing/out",
    ),
    Case(
        "recipe-output-read-only",
        "aicr",
        ("recipe", "--service", "eks", "--accelerator", "h100", "-o", "ro/recipe.yaml"),
        {"ro": READ_ONLY_DIR},
        2,
        "ro/recipe.yaml: cannot write",
        "output-unwritable",
    ),
    Case(
        "recipe-output-missing-folder",
        "aicr",
        ("recipe", "--service", "eks", "--accelerator", "h100", "-o", "missing/recipe.yaml"),
        {},
        2,
        "missing: output folder does not exist",
        "output-unwritable",
    ),
    Case(
        "recipe-output-is-directory",
        "aicr",
        ("recipe", "--service", "eks", "--accelerator", "h100", "-o", "dir"),
        {"dir": DIRECTORY},
        2,
        "dir: is a directory, expected a file",
        "output-unwritable",
    ),
    Case(
        "recipe-accelerator-unknown",
        "aicr",
        ("recipe", "--service", "eks", "--accelerator", "h300"),
        {},
        2,
        "--accelerator: invalid accelerator 'h300'",
        "flag",
    ),
    Case(
        "recipe-criteria-unknown-field",
        "aicr",
        ("recipe", "-c", "criteria.yaml"),
        {"criteria.yaml": FromBase("criteria", append="  colour: green\n")},
        2,
        "colour",
        "unknown-field",
    ),
    Case(
        "recipe-criteria-bad-value",
        "aicr",
        ("recipe", "-c", "criteria.yaml"),
        {"criteria.yaml": FromBase("criteria", (("h100", "h100; reboot"),))},
        2,
        "spec.accelerator: invalid accelerator 'h100; reboot'",
        "enum",
    ),
    Case(
        "recipe-snapshot-unknown-field",
        "aicr",
        ("recipe", "--service", "eks", "-s", "snapshot.yaml"),
        {"snapshot.yaml": FromBase("snapshot", append="extra: 1\n")},
        2,
        "snapshot.yaml extra: Extra inputs are not permitted",
        "unknown-field",
    ),
    Case(
        "recipe-max-input-bytes-not-a-number",
        "aicr",
        ("recipe", "-c", "criteria.yaml"),
        {"criteria.yaml": FromBase("criteria")},
        2,
        "AICR_MAX_INPUT_BYTES: expected a positive whole number of bytes, got 'lots'",
        "flag",
        env={"AICR_MAX_INPUT_BYTES": "lots"},
    ),
    Case(
        "recipe-criteria-dash-is-a-file-name",
        "aicr",
        ("recipe", "-c", "-"),
        {},
        2,
        "-: file does not exist",
        "missing",
    ),
    Case(
        "verify-checksums-garbage",
        "aicr",
        ("verify", "bundle"),
        {"bundle": Bundle({"checksums.txt": "not a checksum line\n"})},
        2,
        "bundle/checksums.txt:1: expected '<sha256>  <path>'",
        "syntax",
    ),
    Case(
        "verify-checksums-escape",
        "aicr",
        ("verify", "bundle"),
        {"bundle": Bundle({"checksums.txt": "0" * 64 + "  ../../etc/passwd\n"})},
        2,
        "bundle/checksums.txt:1: path '../../etc/passwd' escapes the bundle directory",
        "grammar",
    ),
    Case("verify-not-a-bundle", "aicr", ("verify", "empty"), {"empty": DIRECTORY}, 2, "empty: not a bundle", "missing"),
    Case(
        "verify-missing-folder",
        "aicr",
        ("verify", "absent"),
        {},
        2,
        "absent: bundle directory does not exist",
        "missing",
    ),
    Case(
        "diff-output-missing-folder",
        "aicr",
        ("diff", "-b", "snapshot.yaml", "--target", "snapshot.yaml", "-o", "missing/d.yaml"),
        {"snapshot.yaml": FromBase("snapshot")},
        2,
        "missing: output folder does not exist",
        "output-unwritable",
    ),
    Case(
        "diff-output-read-only",
        "aicr",
        ("diff", "-b", "snapshot.yaml", "--target", "snapshot.yaml", "-o", "ro/d.yaml"),
        {"snapshot.yaml": FromBase("snapshot"), "ro": READ_ONLY_DIR},
        2,
        "ro/d.yaml: cannot write",
        "output-unwritable",
    ),
    # nvcrectl: Certifications and WorkloadRuns whose names and images the cluster or a shell would refuse.
    _cert(
        "cert-image-semicolon",
        "  maxBytes: 1G\n",
        "  maxBytes: 1G\n  image: 'busybox; touch /tmp/x'\n",
        "spec.image",
        "grammar",
    ),
    _cert("cert-image-upper", "  maxBytes: 1G\n", "  maxBytes: 1G\n  image: Busybox:1\n", "spec.image", "grammar"),
    _cert("cert-selector-key", "{pool: a}", "{'bad key': a}", "spec.target.nodeSelector: invalid label key", "label"),
    _cert("cert-selector-value", "{pool: a}", "{pool: 'a;b'}", "spec.target.nodeSelector[pool]", "label"),
    _cert(
        "cert-selector-key-render",
        "{pool: a}",
        "{'-x': a}",
        "spec.target.nodeSelector: invalid label key",
        "label",
        command="render",
    ),
    _cert(
        "cert-node-name-traversal",
        "{nodeSelector: {pool: a}}",
        "{nodeNames: ['../../x']}",
        "spec.target.nodeNames[0]: invalid node name '../../x'",
        "node-name",
    ),
    _cert(
        "cert-node-name-empty",
        "{nodeSelector: {pool: a}}",
        "{nodeNames: ['']}",
        "spec.target.nodeNames[0]: invalid node name ''",
        "node-name",
    ),
    _cert(
        "cert-taint-effect",
        "{nodeSelector: {pool: a}}",
        "{taintSelectors: [{key: gate, effect: Sometimes}]}",
        "spec.target.taintSelectors[0].effect",
        "taint",
    ),
    _cert(
        "cert-expression-operator",
        "{nodeSelector: {pool: a}}",
        "{matchExpressions: [{key: pool, operator: Near}]}",
        "spec.target.matchExpressions[0]",
        "label",
    ),
    _cert(
        "cert-unknown-field", "  maxBytes: 1G\n", "  maxBytes: 1G\n  colour: green\n", "spec.colour", "unknown-field"
    ),
    _cert(
        "cert-unknown-category", "variant: dcgm-l1", "variant: dcgm-l9", "unknown category diagnostics/dcgm-l9", "enum"
    ),
    _cert(
        "cert-threshold-key",
        "  maxBytes: 1G\n",
        "  maxBytes: 1G\n  thresholds: {bandwidth: 'value > 1'}\n",
        "spec.thresholds",
        "unknown-field",
    ),
    _cert(
        "cert-threshold-cel",
        "  maxBytes: 1G\n",
        "  maxBytes: 1G\n  thresholds: {busBandwidthGBps: 'value >>> 1'}\n",
        "spec.thresholds",
        "rule",
    ),
    _cert("cert-name-invalid", "{name: rack-7}", "{name: 'Rack 7'}", "metadata.name", "grammar"),
    _cert("cert-kind-wrong", "kind: Certification", "kind: Pod", "cert.yaml: expected a Certification", "wrong-kind"),
    _cert("cert-max-bytes", "maxBytes: 1G", "maxBytes: lots", "spec.maxBytes", "syntax"),
    Case(
        "cert-run-strategy-unknown",
        "nvcrectl",
        ("certification", "run", "-f", "cert.yaml", "--strategy", "guess"),
        {"cert.yaml": FromBase("cert")},
        2,
        "--strategy",
        "flag",
    ),
    Case(
        "cert-run-timeout-syntax",
        "nvcrectl",
        ("certification", "run", "-f", "cert.yaml", "--wait", "--timeout", "soon"),
        {"cert.yaml": FromBase("cert")},
        2,
        "--timeout",
        "flag",
    ),
    Case(
        "workloadrun-image",
        "nvcrectl",
        ("workloadrun", "run", "-f", "run.yaml"),
        {"run.yaml": FromBase("workloadrun", (("nccl-bench:1", "nccl-bench:1 && reboot"),))},
        2,
        "spec.image",
        "grammar",
    ),
    Case(
        "workloadrun-regex",
        "nvcrectl",
        ("workloadrun", "run", "-f", "run.yaml"),
        {"run.yaml": FromBase("workloadrun", (("([0-9.]+)", "([0-9.]+"),))},
        2,
        "spec.metric.regex",
        "rule",
    ),
    Case(
        "workloadrun-threshold-cel",
        "nvcrectl",
        ("workloadrun", "run", "-f", "run.yaml"),
        {"run.yaml": FromBase("workloadrun", (("value >= 450", "value >=="),))},
        2,
        "threshold",
        "rule",
    ),
    Case(
        "workloadrun-unknown-field",
        "nvcrectl",
        ("workloadrun", "run", "-f", "run.yaml"),
        {"run.yaml": FromBase("workloadrun", append="  colour: green\n")},
        2,
        "colour",
        "unknown-field",
    ),
    Case(
        "results-kind-unknown",
        "nvcrectl",
        ("results", "parse", "--kind", "hpl", "nccl.log"),
        {"nccl.log": FromBase("nccl")},
        2,
        "--kind",
        "flag",
    ),
    Case(
        "results-parse-directory",
        "nvcrectl",
        ("results", "parse", "--kind", "nccl", "d"),
        {"d": DIRECTORY},
        2,
        "d: is a directory",
        "directory",
    ),
    Case(
        "nvcre-manifests-set-syntax",
        "nvcrectl",
        ("manifests", "--set", "a.b[=1"),
        {},
        2,
        "--set",
        "flag",
    ),
    Case(
        "report-results-file-missing-folder",
        "nvcrectl",
        ("certification", "report", "rack-7", "--results-file", "missing/r.json"),
        {},
        2,
        "missing: output folder does not exist",
        "output-unwritable",
    ),
    Case(
        "report-results-file-read-only",
        "nvcrectl",
        ("certification", "report", "rack-7", "--results-file", "ro/r.json"),
        {"ro": READ_ONLY_DIR},
        2,
        "ro/r.json: cannot write",
        "output-unwritable",
    ),
    # nvsentinel: HealthEvents, rule sets and state files.
    _event(
        "event-node-traversal",
        EVENT.replace("node-001", "../../x"),
        "nodeName: invalid node name '../../x'",
        "node-name",
    ),
    _event("event-node-empty", EVENT.replace("node-001", ""), "nodeName: invalid node name ''", "node-name"),
    _event(
        "event-node-upper", EVENT.replace("node-001", "Node_1"), "nodeName: invalid node name 'Node_1'", "node-name"
    ),
    _event("event-node-long", EVENT.replace("node-001", "a" * 254), "nodeName: invalid node name", "node-name"),
    _event("event-unknown-field", EVENT.replace('"agent"', '"colour": "green", "agent"'), "colour", "unknown-field"),
    _event("event-fatal-type", EVENT.replace("true", '"maybe"'), "invalid HealthEvent: isFatal", "type"),
    _event(
        "event-action-unknown",
        EVENT.replace('"isFatal"', '"recommendedAction": "PRAY", "isFatal"'),
        "unknown RecommendedAction 'PRAY'",
        "enum",
    ),
    _event("event-nan", EVENT.replace('["79"]', "NaN"), "events.json: not JSON this reader accepts", "syntax"),
    _event("event-second-line-bad", EVENT + "{\n", "events.json:2", "syntax"),
    Case(
        "event-stdin-big",
        "nvsentinel",
        ("events", "publish", "-f", "-"),
        {"big.json": BIG},
        2,
        "-: input goes on, more than the limit of 33554432 bytes",
        "size-50MB",
        stdin="big.json",
    ),
    Case(
        "event-stdin-not-utf8",
        "nvsentinel",
        ("events", "publish", "-f", "-"),
        {"in.json": NOT_UTF8},
        2,
        "-: not UTF-8 text",
        "not-utf8",
        stdin="in.json",
    ),
    Case(
        "replay-events-stdin-deep",
        "nvsentinel",
        ("rules", "replay", "-f", "values.yaml", "--events", "-"),
        {"values.yaml": FromBase("values"), "in.json": DEEP_JSON},
        2,
        "JSON nested deeper than 100 levels",
        "deep-nesting",
        stdin="in.json",
    ),
    Case(
        "xid-stdin-nul",
        "nvsentinel",
        ("monitor", "xid", "--node", "n1", "--file", "-", "--dry-run"),
        {"in.log": NUL},
        2,
        "binary data: NUL byte",
        "nul-byte",
        stdin="in.log",
    ),
    Case(
        "rules-check-taint-value",
        "nvsentinel",
        ("rules", "check", "-f", "values.yaml"),
        {
            "values.yaml": "fault-quarantine:\n  ruleSets:\n    - name: r\n"
            "      match: {all: [{kind: HealthEvent, expression: 'event.isFatal'}]}\n"
            "      taint: {key: nvidia.com/gpu-error, value: 'fatal error', effect: NoSchedule}\n"
        },
        1,
        "taint",
        "taint",
    ),
    Case(
        "rules-check-unknown-field",
        "nvsentinel",
        ("rules", "check", "-f", "values.yaml"),
        {"values.yaml": "fault-quarantine:\n  colour: green\n"},
        1,
        "colour",
        "unknown-field",
    ),
    Case(
        "rules-check-cel",
        "nvsentinel",
        ("rules", "check", "-f", "values.yaml"),
        {
            "values.yaml": "fault-quarantine:\n  ruleSets:\n    - name: r\n"
            "      match: {all: [{kind: HealthEvent, expression: 'event.isFatall'}]}\n"
        },
        1,
        "isFatall",
        "rule",
    ),
    Case(
        "replay-skip-label-key",
        "nvsentinel",
        ("rules", "replay", "-f", "values.yaml", "--events", "events.json"),
        {
            "values.yaml": "fault-quarantine:\n  skipNodeLabels:\n    - {key: 'bad key', value: 'true'}\n",
            "events.json": EVENT,
        },
        2,
        "skipNodeLabels[0].key",
        "label",
    ),
    Case(
        "replay-skip-label-value",
        "nvsentinel",
        ("rules", "replay", "-f", "values.yaml", "--events", "events.json"),
        {
            "values.yaml": "fault-quarantine:\n  skipNodeLabels:\n    - {key: skip, value: 'a;b'}\n",
            "events.json": EVENT,
        },
        2,
        "skipNodeLabels[0].value",
        "label",
    ),
    Case(
        "run-values-unknown-field",
        "nvsentinel",
        ("run", "-f", "values.yaml"),
        {"values.yaml": "fault-quarantine:\n  colour: green\n"},
        2,
        "colour",
        "unknown-field",
    ),
    Case(
        "run-values-taint-value",
        "nvsentinel",
        ("run", "-f", "values.yaml"),
        {
            "values.yaml": "fault-quarantine:\n  ruleSets:\n    - name: r\n"
            "      match: {all: [{kind: HealthEvent, expression: 'event.isFatal'}]}\n"
            "      taint: {key: nvidia.com/gpu-error, value: 'fatal error', effect: NoSchedule}\n"
        },
        2,
        "taint.value: invalid taint value 'fatal error'",
        "taint",
    ),
    Case(
        "state-not-object",
        "nvsentinel",
        ("monitor", "dcgm", *STATE_ARGS[:-1], "state.json"),
        {"dcgm.json": FromBase("dcgm"), "state.json": '"reported"\n'},
        2,
        "state.json: monitor state must be a JSON object",
        "state-file",
    ),
    Case(
        "state-not-json",
        "nvsentinel",
        ("monitor", "dcgm", *STATE_ARGS[:-1], "state.json"),
        {"dcgm.json": FromBase("dcgm"), "state.json": "reported: yes\n"},
        2,
        "state.json",
        "state-file",
    ),
    Case(
        "state-reported-not-a-map",
        "nvsentinel",
        ("monitor", "dcgm", *STATE_ARGS[:-1], "state.json"),
        {"dcgm.json": FromBase("dcgm"), "state.json": '{"reported": null}\n'},
        2,
        "state.json: monitor state: 'reported' must map slots to events",
        "state-file",
    ),
    Case(
        "state-counters-not-numbers",
        "nvsentinel",
        ("monitor", "dcgm", *STATE_ARGS[:-1], "state.json"),
        {"dcgm.json": FromBase("dcgm"), "state.json": '{"counters": {"n1/mlx5_0/1": {"symbol_error": "3"}}}\n'},
        2,
        "state.json: monitor state: 'counters' must map keys to whole numbers",
        "state-file",
    ),
    Case(
        "replay-nodes-not-nodes",
        "nvsentinel",
        ("rules", "replay", "-f", "values.yaml", "--events", "events.json", "--nodes", "nodes.json"),
        {"values.yaml": FromBase("values"), "events.json": EVENT, "nodes.json": '{"items": [{"metadata": 1}]}\n'},
        2,
        "nodes.json: items[0]: not a Node",
        "wrong-shape",
    ),
    Case(
        "state-missing-folder",
        "nvsentinel",
        ("monitor", "dcgm", *STATE_ARGS[:-1], "var/lib/state.json"),
        {"dcgm.json": FromBase("dcgm")},
        2,
        "var/lib: output folder does not exist",
        "output-unwritable",
    ),
    Case(
        "state-read-only-folder",
        "nvsentinel",
        ("monitor", "nic", "--node", "n1", "--sysfs", "sys", "--state", "ro/state.json"),
        {"sys/class/infiniband": DIRECTORY, "ro": READ_ONLY_DIR},
        2,
        "ro/state.json: cannot write",
        "output-unwritable",
    ),
    Case(
        "state-is-directory",
        "nvsentinel",
        ("monitor", "nic", "--node", "n1", "--sysfs", "sys", "--state", "state"),
        {"sys/class/infiniband": DIRECTORY, "state": DIRECTORY},
        2,
        "state: is a directory, expected a file",
        "output-unwritable",
    ),
    Case(
        "nic-sysfs-missing",
        "nvsentinel",
        ("monitor", "nic", "--node", "n1", "--sysfs", "nosys", "--dry-run"),
        {},
        2,
        "nosys: folder does not exist",
        "missing",
    ),
    Case(
        "nic-sysfs-is-file",
        "nvsentinel",
        ("monitor", "nic", "--node", "n1", "--sysfs", "sys", "--dry-run"),
        {"sys": "not a folder\n"},
        2,
        "sys: is a file, expected a folder",
        "directory",
    ),
    Case(
        "xid-node-traversal",
        "nvsentinel",
        ("monitor", "xid", "--node", "../etc", "--file", "kern.log", "--dry-run"),
        {"kern.log": FromBase("kernlog")},
        2,
        "--node: invalid node name '../etc'",
        "node-name",
    ),
    Case(
        "xid-node-root-bad-name",
        "nvsentinel",
        ("monitor", "xid", "--node-root", "nodes", "--dry-run"),
        {"nodes/Bad Node/kern.log": FromBase("kernlog")},
        2,
        "nodes/Bad Node: invalid node name 'Bad Node'",
        "node-name",
    ),
    Case(
        "xid-node-root-missing",
        "nvsentinel",
        ("monitor", "xid", "--node-root", "nodes", "--dry-run"),
        {},
        3,
        "nodes: node root not found",
        "missing",
    ),
    Case(
        "xid-boot-time",
        "nvsentinel",
        ("monitor", "xid", "--node", "n1", "--file", "kern.log", "--boot-time", "yesterday", "--dry-run"),
        {"kern.log": FromBase("kernlog")},
        2,
        "--boot-time",
        "flag",
    ),
    Case(
        "dcgm-node-empty",
        "nvsentinel",
        ("monitor", "dcgm", "--node", "", "--file", "dcgm.json", "--dry-run"),
        {"dcgm.json": FromBase("dcgm")},
        2,
        "--node: --node is required",
        "node-name",
    ),
    Case(
        "dcgm-interval-syntax",
        "nvsentinel",
        ("monitor", "dcgm", "--node", "n1", "--file", "dcgm.json", "--interval", "often", "--dry-run"),
        {"dcgm.json": FromBase("dcgm")},
        2,
        "--interval",
        "flag",
    ),
    Case(
        "events-list-node",
        "nvsentinel",
        ("events", "list", "--node", "Node_1"),
        {},
        2,
        "--node: invalid node name 'Node_1'",
        "node-name",
    ),
    Case("events-list-since", "nvsentinel", ("events", "list", "--since", "lately"), {}, 2, "--since", "flag"),
    Case("events-list-after", "nvsentinel", ("events", "list", "--after", "2026-13-45"), {}, 2, "--after", "flag"),
    Case(
        "events-list-phase",
        "nvsentinel",
        ("events", "list", "--phase", "Quarantined,Sleeping"),
        {},
        2,
        "Sleeping",
        "enum",
    ),
    Case(
        "validation-nodes-from-traversal",
        "nvsentinel",
        ("validation", "create", "--nodes-from", "drift.yaml"),
        {"drift.yaml": FromBase("drift", (("[node-001]", "['../../x']"),))},
        2,
        "invalid node name '../../x'",
        "node-name",
    ),
    Case(
        "validation-nodes-flag",
        "nvsentinel",
        ("validation", "create", "--nodes", "node-1,../x"),
        {},
        2,
        "invalid node name '../x'",
        "node-name",
    ),
    Case(
        "validation-cordon-node",
        "nvsentinel",
        ("validation", "cordon", "Bad_Node"),
        {},
        2,
        "invalid node name 'Bad_Node'",
        "node-name",
    ),
    Case(
        "nodes-release-node", "nvsentinel", ("nodes", "release", "../x"), {}, 2, "invalid node name '../x'", "node-name"
    ),
    Case(
        "nvsentinel-manifests-set-string",
        "nvsentinel",
        ("manifests", "--set-string", "noequals"),
        {},
        2,
        "--set-string",
        "flag",
    ),
)


def corpus() -> tuple[Case, ...]:
    """Every case, in a stable order; ids are unique."""
    every = (*layer_cases(), *FIELD_CASES)
    ids = Counter(case.id for case in every)
    duplicated = [name for name, count in ids.items() if count > 1]
    assert not duplicated, f"duplicate case ids: {duplicated}"
    return every


def per_program(cases: tuple[Case, ...]) -> dict[str, int]:
    return dict(sorted(Counter(case.program for case in cases).items()))


def per_category(cases: tuple[Case, ...]) -> dict[str, Counter[int]]:
    """Category → how many of its cases end with each exit status."""
    found: dict[str, Counter[int]] = {}
    for case in cases:
        found.setdefault(case.category, Counter())[case.exit] += 1
    return dict(sorted(found.items()))


CATEGORIES: Final[dict[str, str]] = {
    "alias-bomb": "a YAML alias bomb (billion laughs, 342 bytes)",
    "deep-nesting": "YAML or JSON nested 5,000 levels deep",
    "directory": "a directory where a file is expected (or a file where a folder is)",
    "enum": "a value outside a closed list (component type, category, action, phase)",
    "flag": "a flag value that cannot be used (duration, time, --set, deployer, count)",
    "grammar": "a name, version, source, image or URL outside its grammar (shell metacharacters)",
    "label": "a label key, value or selector Kubernetes would refuse",
    "missing": "a file or folder that does not exist",
    "node-name": "a node name that is not a DNS-1123 subdomain (`../../x`, empty, upper case)",
    "not-utf8": "bytes that are not UTF-8",
    "nul-byte": "binary data (a NUL byte)",
    "output-unwritable": "an output in a missing or read-only folder, under a file, or a directory",
    "rule": "a CEL rule or regular expression that does not compile",
    "size-50MB": "a 50 MB file or stdin (over the 32 MiB limit)",
    "state-file": "a monitor `--state` file that is not a JSON object of the shape the monitor writes",
    "symlink-loop": "a symlink loop where a file is expected",
    "syntax": "YAML or JSON that does not parse, or a line that is not a checksum",
    "taint": "a taint key, value or effect Kubernetes would refuse",
    "type": "a field of the wrong type",
    "unknown-field": "a field the format does not have",
    "unreadable": "a file that cannot be read (mode 000)",
    "wrong-kind": "a document of another kind",
    "wrong-shape": "a list where a mapping or object is expected",
}


def render_counts(cases: tuple[Case, ...]) -> str:
    """The tables docs/troubleshooting.md shows between its corpus markers (a test keeps them equal)."""
    programs = per_program(cases)
    lines = ["| program | cases |", "|---|---|"]
    lines += [f"| `{name}` | {count} |" for name, count in programs.items()]
    categories = per_category(cases)
    statuses = sorted({status for counts in categories.values() for status in counts}, key=lambda s: (s != 2, s))
    lines += [f"| all | {sum(programs.values())} |", ""]
    lines += ["| category | cases | " + " | ".join(f"exit {s}" for s in statuses) + " |"]
    lines += ["|---|---|" + "---|" * len(statuses)]
    for name, counts in categories.items():
        cells = " | ".join(str(counts.get(s, "")) for s in statuses)
        lines.append(f"| {CATEGORIES[name]} | {sum(counts.values())} | {cells} |")
    return "\n".join(lines) + "\n"
