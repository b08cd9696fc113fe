"""Build the protobuf field table the API server emulator decodes request bodies with.

Typed clients (every ``kubectl create <kind>``, ``kubectl auth``, helm's release Secrets) write
``application/vnd.kubernetes.protobuf``. Decoding that needs each message's field numbers, names and
types, which live in Kubernetes' ``generated.proto`` files. This script reads those files (proto2:
packages, imports, messages, ``optional``/``repeated`` fields, ``map<string, X>``) and writes a compact
JSON table into the package, so the emulator carries derived facts and no upstream file::

    .venv/bin/python -m shared.sim.apiserver.protogen /path/to/k8s-proto [--out FILE]

Everything comes from the ``.proto`` text except five small lists below, each saying where its facts
come from: API group names and the request options every group version accepts (neither is in the
files), fields the Go types embed with ``json:",inline"``, fields whose explicit zero must survive
(set pointers), and fields whose comment lacks ``+optional`` although Go omits their empty value.
Comments, options and validation markers are dropped; a field keeps only whether its comment says
``+optional``. Object kinds are the messages whose ``metadata`` is ObjectMeta or ListMeta.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SOURCE_TAG = "v0.34.10"
SOURCE_REPOSITORIES = ("github.com/kubernetes/api", "github.com/kubernetes/apimachinery")
GENERATOR = "shared/sim/apiserver/protogen.py"
TABLE_NAME = "proto-1.34.json"
META = "k8s.io.apimachinery.pkg.apis.meta.v1"

SCALARS = frozenset(
    {
        "double",
        "float",
        "int32",
        "int64",
        "uint32",
        "uint64",
        "sint32",
        "sint64",
        "fixed32",
        "fixed64",
        "sfixed32",
        "sfixed64",
        "bool",
        "string",
        "bytes",
    }
)

# API group of each ``k8s.io.api.<name>.<version>`` package: the ``GroupName`` constant of the
# package's register.go in kubernetes/api (group names are not written in the .proto files).
GROUPS: dict[str, str] = {
    "core": "",
    "apps": "apps",
    "batch": "batch",
    "policy": "policy",
    "rbac": "rbac.authorization.k8s.io",
    "scheduling": "scheduling.k8s.io",
    "coordination": "coordination.k8s.io",
    "events": "events.k8s.io",
    "authorization": "authorization.k8s.io",
    "authentication": "authentication.k8s.io",
    "networking": "networking.k8s.io",
}

# Request options every group version accepts as a body (metav1.AddToGroupVersion registers them in
# each group version besides meta.k8s.io/v1: apimachinery pkg/apis/meta/v1/register.go, optionsTypes).
META_KINDS = ("ListOptions", "GetOptions", "DeleteOptions", "CreateOptions", "UpdateOptions", "PatchOptions")

# Fields the Go structs embed with ``json:",inline"``: protobuf nests them as a message, JSON spreads
# their members into the parent (kubernetes/api core/v1 and networking/v1 types.go; the pod-template
# ones agree with the PodTemplateSpec schema published in JobSet's CRD, where ``name`` sits directly
# in configMapKeyRef and the probe handlers directly in a probe).
INLINE = frozenset(
    {
        "k8s.io.api.core.v1.ConfigMapEnvSource.localObjectReference",
        "k8s.io.api.core.v1.ConfigMapKeySelector.localObjectReference",
        "k8s.io.api.core.v1.ConfigMapProjection.localObjectReference",
        "k8s.io.api.core.v1.ConfigMapVolumeSource.localObjectReference",
        "k8s.io.api.core.v1.SecretEnvSource.localObjectReference",
        "k8s.io.api.core.v1.SecretKeySelector.localObjectReference",
        "k8s.io.api.core.v1.SecretProjection.localObjectReference",
        "k8s.io.api.core.v1.Volume.volumeSource",
        "k8s.io.api.core.v1.Probe.handler",
        "k8s.io.api.core.v1.PersistentVolumeSpec.persistentVolumeSource",
        "k8s.io.api.core.v1.EphemeralContainer.ephemeralContainerCommon",
        "k8s.io.api.networking.v1.IngressRule.ingressRuleValue",
    }
)

# Fields whose explicit zero, false or "" must survive although their comment says ``+optional``:
# pointers (``*int32``, ``*bool``, ``*string`` in the Go types), which Go writes only when set and
# whose JSON keeps a set zero even under omitempty, and the few optional fields Go tags without
# omitempty (core/v1 Event.reportingComponent and reportingInstance). Limited to what
# ``kubectl create``, client-go leader election, event recorders and helm send, plus pod-template
# fields people set to 0/false on purpose.
KEEP_ZERO = frozenset(
    {
        "k8s.io.api.apps.v1.DeploymentSpec.replicas",
        "k8s.io.api.apps.v1.DeploymentSpec.revisionHistoryLimit",
        "k8s.io.api.apps.v1.DeploymentSpec.progressDeadlineSeconds",
        "k8s.io.api.apps.v1.ReplicaSetSpec.replicas",
        "k8s.io.api.apps.v1.StatefulSetSpec.replicas",
        "k8s.io.api.apps.v1.StatefulSetSpec.revisionHistoryLimit",
        "k8s.io.api.apps.v1.RollingUpdateStatefulSetStrategy.partition",
        "k8s.io.api.apps.v1.DaemonSetSpec.revisionHistoryLimit",
        "k8s.io.api.batch.v1.JobSpec.parallelism",
        "k8s.io.api.batch.v1.JobSpec.completions",
        "k8s.io.api.batch.v1.JobSpec.activeDeadlineSeconds",
        "k8s.io.api.batch.v1.JobSpec.backoffLimit",
        "k8s.io.api.batch.v1.JobSpec.backoffLimitPerIndex",
        "k8s.io.api.batch.v1.JobSpec.maxFailedIndexes",
        "k8s.io.api.batch.v1.JobSpec.ttlSecondsAfterFinished",
        "k8s.io.api.batch.v1.JobSpec.suspend",
        "k8s.io.api.batch.v1.JobSpec.manualSelector",
        "k8s.io.api.batch.v1.CronJobSpec.startingDeadlineSeconds",
        "k8s.io.api.batch.v1.CronJobSpec.suspend",
        "k8s.io.api.batch.v1.CronJobSpec.successfulJobsHistoryLimit",
        "k8s.io.api.batch.v1.CronJobSpec.failedJobsHistoryLimit",
        "k8s.io.api.core.v1.ConfigMap.immutable",
        "k8s.io.api.core.v1.Secret.immutable",
        "k8s.io.api.core.v1.ServiceAccount.automountServiceAccountToken",
        "k8s.io.api.core.v1.PodSpec.automountServiceAccountToken",
        "k8s.io.api.core.v1.PodSpec.terminationGracePeriodSeconds",
        "k8s.io.api.core.v1.PodSpec.activeDeadlineSeconds",
        "k8s.io.api.core.v1.PodSpec.shareProcessNamespace",
        "k8s.io.api.core.v1.PodSpec.enableServiceLinks",
        "k8s.io.api.core.v1.PodSpec.hostUsers",
        "k8s.io.api.core.v1.PodSpec.setHostnameAsFQDN",
        "k8s.io.api.core.v1.PodSpec.priority",
        "k8s.io.api.core.v1.Probe.terminationGracePeriodSeconds",
        "k8s.io.api.core.v1.SecurityContext.privileged",
        "k8s.io.api.core.v1.SecurityContext.runAsUser",
        "k8s.io.api.core.v1.SecurityContext.runAsGroup",
        "k8s.io.api.core.v1.SecurityContext.runAsNonRoot",
        "k8s.io.api.core.v1.SecurityContext.readOnlyRootFilesystem",
        "k8s.io.api.core.v1.SecurityContext.allowPrivilegeEscalation",
        "k8s.io.api.core.v1.PodSecurityContext.runAsUser",
        "k8s.io.api.core.v1.PodSecurityContext.runAsGroup",
        "k8s.io.api.core.v1.PodSecurityContext.runAsNonRoot",
        "k8s.io.api.core.v1.PodSecurityContext.fsGroup",
        "k8s.io.api.core.v1.ConfigMapVolumeSource.defaultMode",
        "k8s.io.api.core.v1.ConfigMapVolumeSource.optional",
        "k8s.io.api.core.v1.SecretVolumeSource.defaultMode",
        "k8s.io.api.core.v1.SecretVolumeSource.optional",
        "k8s.io.api.core.v1.ProjectedVolumeSource.defaultMode",
        "k8s.io.api.core.v1.KeyToPath.mode",
        "k8s.io.api.core.v1.ConfigMapProjection.optional",
        "k8s.io.api.core.v1.SecretProjection.optional",
        "k8s.io.api.core.v1.DownwardAPIVolumeSource.defaultMode",
        "k8s.io.api.core.v1.DownwardAPIVolumeFile.mode",
        "k8s.io.api.core.v1.ServiceAccountTokenProjection.expirationSeconds",
        "k8s.io.api.core.v1.HostPathVolumeSource.type",
        "k8s.io.api.core.v1.Event.reportingComponent",
        "k8s.io.api.core.v1.Event.reportingInstance",
        "k8s.io.api.core.v1.ConfigMapKeySelector.optional",
        "k8s.io.api.core.v1.SecretKeySelector.optional",
        "k8s.io.api.core.v1.ConfigMapEnvSource.optional",
        "k8s.io.api.core.v1.SecretEnvSource.optional",
        "k8s.io.api.core.v1.PersistentVolumeClaimSpec.storageClassName",
        "k8s.io.api.core.v1.ServiceSpec.allocateLoadBalancerNodePorts",
        "k8s.io.api.policy.v1.PodDisruptionBudgetSpec.minAvailable",
        "k8s.io.api.policy.v1.PodDisruptionBudgetSpec.maxUnavailable",
        "k8s.io.api.authentication.v1.TokenRequestSpec.expirationSeconds",
        "k8s.io.api.coordination.v1.LeaseSpec.holderIdentity",
        "k8s.io.api.coordination.v1.LeaseSpec.leaseDurationSeconds",
        "k8s.io.api.coordination.v1.LeaseSpec.leaseTransitions",
        "k8s.io.api.networking.v1.NetworkPolicyPort.endPort",
        f"{META}.DeleteOptions.gracePeriodSeconds",
        f"{META}.DeleteOptions.orphanDependents",
    }
)

# Fields whose comment lacks ``+optional`` but whose Go JSON tag says omitempty, so an empty value is
# not written (apimachinery pkg/apis/meta/v1/types.go: ListMeta.Continue, ManagedFieldsEntry; api
# events/v1, authorization/v1 and apps/v1 types.go for the others).
OMIT_EMPTY = frozenset(
    {
        "k8s.io.api.events.v1.Event.reportingController",
        "k8s.io.api.events.v1.Event.reportingInstance",
        "k8s.io.api.events.v1.Event.action",
        "k8s.io.api.events.v1.Event.reason",
        "k8s.io.api.events.v1.Event.type",
        "k8s.io.api.authorization.v1.SelfSubjectRulesReviewSpec.namespace",
        "k8s.io.api.apps.v1.DeploymentCondition.reason",
        "k8s.io.api.apps.v1.DeploymentCondition.message",
        f"{META}.ListMeta.continue",
        f"{META}.ManagedFieldsEntry.manager",
        f"{META}.ManagedFieldsEntry.operation",
        f"{META}.ManagedFieldsEntry.apiVersion",
        f"{META}.ManagedFieldsEntry.fieldsType",
        f"{META}.ManagedFieldsEntry.subresource",
    }
)

_FIELD = re.compile(
    r"^(optional|repeated|required)\s+([.\w]+)\s+(\w+)\s*=\s*(\d+)\s*(\[[^\]]*\])?\s*;$"
    r"|^map\s*<\s*(\w+)\s*,\s*([.\w]+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;$"
)


class ProtoError(ValueError):
    """A construct this reader does not take (the k8s files never use it)."""


@dataclass
class Field:
    name: str
    number: int
    label: str  # optional | repeated | required | map
    type: str  # scalar name or fully qualified message name, without a leading dot
    optional_marker: bool
    map_key: str = ""


@dataclass
class Message:
    full_name: str
    fields: list[Field] = field(default_factory=list)
    nullable: bool = False  # +protobuf.nullable=true: a named slice type, its JSON is the bare list


@dataclass
class ProtoFile:
    package: str
    imports: list[str]
    messages: list[Message]


def _strip_block_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def parse_file(text: str) -> ProtoFile:
    """One generated.proto: its package, imports and top-level messages with their fields.

    Field types stay as written (resolved later against the package and the imports). Raises
    ``ProtoError`` on nested messages, enums, oneofs or anything else k8s files do not contain.
    """
    package = ""
    imports: list[str] = []
    messages: list[Message] = []
    comment: list[str] = []
    current: Message | None = None
    for number, raw in enumerate(_strip_block_comments(text).splitlines(), 1):
        line = raw.strip()
        if not line:
            comment = []
            continue
        if line.startswith("//"):
            comment.append(line[2:].strip())
            continue
        if current is None:
            if line.startswith("syntax"):
                if '"proto2"' not in line:
                    raise ProtoError(f"line {number}: only proto2 is read: {line}")
            elif line.startswith("package "):
                package = line[len("package ") :].rstrip(";").strip()
            elif line.startswith("import "):
                imports.append(line.split('"')[1])
            elif line.startswith("option "):
                pass
            elif m := re.match(r"^message\s+(\w+)\s*\{\s*(\})?$", line):
                current = Message(
                    f"{package}.{m.group(1)}", nullable=any(c.startswith("+protobuf.nullable=true") for c in comment)
                )
                if m.group(2):
                    messages.append(current)
                    current = None
            else:
                raise ProtoError(f"line {number}: unexpected statement: {line}")
            comment = []
            continue
        if line == "}":
            messages.append(current)
            current = None
            comment = []
            continue
        m = _FIELD.match(line)
        if m is None:
            raise ProtoError(f"line {number}: unexpected field syntax: {line}")
        optional_marker = any(c == "+optional" or c.startswith("+optional ") for c in comment)
        if m.group(1):
            current.fields.append(Field(m.group(3), int(m.group(4)), m.group(1), m.group(2), optional_marker))
        else:
            current.fields.append(
                Field(m.group(8), int(m.group(9)), "map", m.group(7), optional_marker, map_key=m.group(6))
            )
        comment = []
    if current is not None:
        raise ProtoError(f"message {current.full_name} is not closed")
    return ProtoFile(package, imports, messages)


def _resolve(type_name: str, package: str, known: set[str]) -> str:
    if type_name in SCALARS:
        return type_name
    if type_name.startswith("."):
        full = type_name[1:]
    else:
        # proto2 scoping: innermost package first, then each enclosing one.
        parts = package.split(".")
        full = ""
        for cut in range(len(parts), -1, -1):
            candidate = ".".join([*parts[:cut], type_name])
            if candidate in known:
                full = candidate
                break
    if full not in known:
        raise ProtoError(f"unknown type {type_name} in package {package}")
    return full


def load(root: Path) -> dict[str, Message]:
    """All messages of every generated.proto under ``root``, types resolved to full names.

    Raises ``ProtoError`` if an import does not resolve within ``root`` or a type is unknown.
    """
    files = {p.relative_to(root).as_posix(): parse_file(p.read_text()) for p in sorted(root.rglob("*.proto"))}
    if not files:
        raise ProtoError(f"no .proto files under {root}")
    for name, parsed in files.items():
        for imported in parsed.imports:
            if imported not in files:
                raise ProtoError(f"{name} imports {imported}, which is not under {root}")
    messages = {m.full_name: m for parsed in files.values() for m in parsed.messages}
    known = set(messages)
    for parsed in files.values():
        for message in parsed.messages:
            for f in message.fields:
                f.type = _resolve(f.type, parsed.package, known)
                if f.label == "map" and f.map_key != "string":
                    raise ProtoError(f"{message.full_name}.{f.name}: only string map keys are read")
    return messages


def _flags(message: str, f: Field) -> str:
    key = f"{message}.{f.name}"
    flags = ""
    if f.optional_marker or key in OMIT_EMPTY:
        flags += "o"
    if key in KEEP_ZERO:
        flags += "z"
    if key in INLINE:
        flags += "i"
    return flags


def _kinds(messages: dict[str, Message]) -> dict[str, dict[str, str]]:
    """apiVersion → kind → message: every API message whose ``metadata`` is ObjectMeta or ListMeta,
    except those other messages hold as a single field (PodTemplateSpec, JobTemplateSpec): an object
    kind is only ever a list's item."""
    out: dict[str, dict[str, str]] = {}
    embedded = {f.type for m in messages.values() for f in m.fields if f.label != "repeated"}
    for full, message in sorted(messages.items()):
        parts = full.split(".")
        if parts[:3] != ["k8s", "io", "api"]:
            continue
        if parts[3] not in GROUPS:
            raise ProtoError(f"package k8s.io.api.{parts[3]} has no API group in GROUPS")
        metadata = next((f for f in message.fields if f.name == "metadata"), None)
        if metadata is None or metadata.type not in (f"{META}.ObjectMeta", f"{META}.ListMeta") or full in embedded:
            continue
        group, version = GROUPS[parts[3]], parts[4]
        out.setdefault(f"{group}/{version}" if group else version, {})[parts[5]] = full
    return out


def build_table(root: Path) -> dict[str, Any]:
    """The table as written to the package (see ``shared.sim.apiserver.protobuf`` for its use)."""
    messages = load(root)
    for key in INLINE | KEEP_ZERO | OMIT_EMPTY:
        owner, _, name = key.rpartition(".")
        if owner not in messages or all(f.name != name for f in messages[owner].fields):
            raise ProtoError(f"{key} is listed in {GENERATOR} but not declared in the .proto files")
    missing = [k for k in META_KINDS if f"{META}.{k}" not in messages]
    if missing:
        raise ProtoError(f"meta kinds missing from the .proto files: {missing}")
    return {
        "comment": (
            f"Derived by {GENERATOR} from the generated.proto files of kubernetes/api and "
            f"kubernetes/apimachinery at tag {SOURCE_TAG} (Kubernetes 1.34). Do not edit; regenerate. "
            "fields: number -> [json name, type, label, flags]; flags: o = +optional or omitempty "
            "(empty value dropped), z = zero kept even so (a set pointer), i = inlined into the parent in JSON."
        ),
        "source": {"tag": SOURCE_TAG, "repositories": list(SOURCE_REPOSITORIES)},
        "generator": GENERATOR,
        "kinds": _kinds(messages),
        "metaKinds": {k: f"{META}.{k}" for k in META_KINDS},
        "nullable": sorted(name for name, m in messages.items() if m.nullable),
        "messages": {
            name: {str(f.number): [f.name, f.type, f.label, _flags(name, f)] for f in m.fields}
            for name, m in sorted(messages.items())
        },
    }


def render(table: dict[str, Any]) -> str:
    """The file text: one message per line, so a regenerated table diffs readably."""
    head = {k: v for k, v in table.items() if k != "messages"}
    lines = [json.dumps(head, separators=(",", ":"))[:-1] + ',"messages":{']
    entries = [
        f"{json.dumps(name)}:{json.dumps(fields, separators=(',', ':'))}" for name, fields in table["messages"].items()
    ]
    lines.append(",\n".join(entries))
    lines.append("}}")
    return "\n".join(lines) + "\n"


def default_output() -> Path:
    return Path(__file__).parent / "data" / TABLE_NAME


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="folder holding k8s.io/**/generated.proto")
    parser.add_argument("--out", type=Path, default=default_output(), help="table to write")
    args = parser.parse_args(argv)
    try:
        text = render(build_table(args.root))
    except (ProtoError, OSError) as exc:
        print(f"protogen: {exc}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
