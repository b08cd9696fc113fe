"""WorkloadRun (nvcre.nvidia.com/v1alpha1): your own container as a one-group certification.

A WorkloadRun runs ``spec.command`` in ``spec.image`` as one Job on the target nodes, under the
same workload contract as the catalog (``render.job``: Indexed, one pod per node, pinned, all GPUs,
gate taints tolerated), reads the log of the pod with completion index 0, extracts one number with
``spec.metric`` (a regex — its first group, or the whole match — or a JSON path into the last JSON
object of the log) and checks it against ``spec.threshold`` (CEL over ``value``). No isolation: a
custom workload's failure says nothing about which node caused it. Level-based like the runner:
``step`` is idempotent and the status is the whole memory.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from typing import Any

from pydantic import Field, model_validator

from shared import errors
from shared.certify import catalog, inputcheck, leasing, models, render, thresholds
from shared.clock import Clock
from shared.kube import crds, jobs, listing, rest
from shared.kube import errors as kube_errors
from shared.kube.api import KubeApi
from shared.kube.customresource import CustomResource, Fields

KIND = "WorkloadRun"
LABEL = "nvcre.nvidia.com/workloadrun"
_PATH_STEP = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]")


class MetricRule(Fields):
    name: str = Field(default="value", description="What the number is called in reports.")
    regex: str | None = Field(default=None, description="First capture group (or the whole match) is the value.")
    jsonPath: str | None = Field(default=None, description="e.g. $.results[0].busbw, into the log's last JSON object.")

    @model_validator(mode="after")
    def _one_rule(self) -> MetricRule:
        if (self.regex is None) == (self.jsonPath is None):
            raise ValueError("give exactly one of regex and jsonPath")
        if self.regex is not None:
            models.check_regex(self.regex, field="spec.metric.regex")
        if self.jsonPath is not None and not _steps(self.jsonPath):
            raise ValueError(f"bad jsonPath {self.jsonPath!r} (e.g. $.results[0].busbw)")
        return self


class WorkloadRunSpec(Fields):
    image: str = Field(min_length=1, max_length=512)
    command: list[str] = Field(min_length=1)
    target: models.TargetSpec = Field(default_factory=models.TargetSpec)
    metric: MetricRule
    threshold: str | None = Field(default=None, description="CEL over `value`, e.g. `value >= 300`.")
    timeout: str = Field(default="1h", pattern=r"^([0-9]+(h|m|s|ms))+$")


class WorkloadRunStatus(Fields):
    phase: models.Phase | None = None
    job: str | None = None
    nodes: list[str] = Field(default_factory=list)
    value: float | None = None
    message: str | None = None
    startTime: str | None = None
    completionTime: str | None = None


class WorkloadRun(CustomResource[WorkloadRunSpec, WorkloadRunStatus]):
    GROUP = models.GROUP
    VERSION = models.VERSION
    KIND = KIND


RESOURCE = crds.Resource.of(
    WorkloadRun,
    plural="workloadruns",
    scope="Namespaced",
    short_names=("wlr",),
    categories=("nvcre",),
    columns=(
        crds.PrinterColumn("Phase", ".status.phase"),
        crds.PrinterColumn("Value", ".status.value"),
        crds.PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
    ),
)


def job_name(run: str) -> str:
    return f"{run[:40]}-wlr"


def _steps(path: str) -> list[tuple[str, str]] | None:
    rest_of = path[1:] if path.startswith("$") else "." + path.lstrip(".")
    steps = _PATH_STEP.findall(rest_of)
    return steps if steps and "".join(f".{k}" if k else f"[{i}]" for k, i in steps) == rest_of else None


def compile_threshold(spec: WorkloadRunSpec, *, where: str) -> thresholds.Thresholds:
    """The threshold as a one-key Thresholds; InvalidInput on a CEL error, before anything runs."""
    if not spec.threshold:
        return thresholds.Thresholds()
    from shared import cel

    program = cel.compile(spec.threshold, name=spec.metric.name, where=f"{where}.threshold")
    try:
        program.evaluate_bool({"value": cel.to_cel(1.0)})
    except cel.EvaluationError as exc:
        raise errors.InvalidInput(f"threshold: {exc}: {spec.threshold!r}", where=where) from None
    return thresholds.Thresholds(((spec.metric.name, program),))


def extract(rule: MetricRule, log: str) -> float | None:
    """The metric from a log, or None when the rule finds no number."""
    if rule.regex is not None:
        found = re.search(rule.regex, log)
        text = found.group(1) if found and found.re.groups else found.group(0) if found else None
    else:
        value: Any = _last_json(log)
        for key, index in _steps(rule.jsonPath or "") or []:
            try:
                value = value[key] if key else value[int(index)]
            except (KeyError, IndexError, TypeError):
                return None
        text = value if isinstance(value, int | float | str) and not isinstance(value, bool) else None
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _last_json(log: str) -> Any:
    decoder, found, start = json.JSONDecoder(), None, log.find("{")
    while start != -1:
        try:
            found, end = decoder.raw_decode(log, start)
        except ValueError:
            end = start + 1
        start = log.find("{", end)
    return found


def load_file(path: Any) -> WorkloadRun:
    from pydantic import ValidationError

    from shared import yamlio

    doc = yamlio.load_file(path)
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise errors.InvalidInput(f"expected a {KIND} document", where=str(path))
    try:
        run = WorkloadRun.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise errors.InvalidInput(f"{where}: {first['msg']}", where=str(path)) from None
    if not run.name:
        raise errors.InvalidInput("metadata.name is required", where=str(path))
    inputcheck.check(run.spec.target, {"spec.image": run.spec.image}, where=str(path))
    compile_threshold(run.spec, where=f"{path}: spec")
    return run


def step(api: KubeApi, *, namespace: str, name: str, clock: Clock) -> WorkloadRun:
    """Launch the Job, or collect it and record the value and verdict; idempotent."""
    raw = rest.get(api, RESOURCE.path(namespace, name), what=RESOURCE.what(name, namespace))
    run = WorkloadRun.model_validate(raw)
    status = run.status.model_copy(deep=True)
    now = clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    if status.phase in (models.Phase.SUCCEEDED, models.Phase.FAILED):
        return run
    if status.phase is None:
        nodes = render.target_nodes(rest.list_items(api, rest.core_path("nodes")), run.spec.target)
        status.startTime, status.job, status.nodes = now, job_name(name), [n.name for n in nodes]
        if not nodes:
            status.phase, status.completionTime = models.Phase.FAILED, now
            status.message = "no node matches spec.target"
        else:
            _launch(api, run, namespace, status.job, nodes, uid=raw["metadata"].get("uid"))
            status.phase, status.message = models.Phase.RUNNING, f"running on {len(nodes)} node(s)"
    else:
        _collect(api, run, namespace, status, now=now)
    return _write(api, namespace, raw, run, status)


def _write(
    api: KubeApi, namespace: str, raw: dict[str, Any], run: WorkloadRun, status: WorkloadRunStatus
) -> WorkloadRun:
    """PUT the status with the resourceVersion read (409 when someone wrote since)."""
    version = raw["metadata"]["resourceVersion"]
    RESOURCE.write_status(api, name=run.name, namespace=namespace, resource_version=version, status=status)
    run.status = status
    return run


def _launch(
    api: KubeApi, run: WorkloadRun, namespace: str, job_name: str, nodes: list[render.TargetNode], *, uid: str | None
) -> None:
    """The catalog's Job contract with the user's image and command, owned by the WorkloadRun."""
    entry = catalog.Entry(
        domain="workloadrun",
        variant=run.name,
        description="",
        parser=catalog.Parser.NCCL,
        scope=catalog.Scope.GROUP,
        image=run.spec.image,
        command=["true"],
    )
    cert = models.Certification.model_validate(
        {
            "metadata": {"name": run.name, "namespace": namespace},
            "spec": {
                "target": run.spec.target.model_dump(),
                "categories": [{"domain": "workloadrun", "variant": run.name}],
            },
        }
    )
    options = models.CategoryOptions(timeoutPerJob=run.spec.timeout)
    document = render.job(render.Group(cert=cert, uid=None, entry=entry, options=options, name=job_name, nodes=nodes))
    document["spec"]["template"]["spec"]["containers"][0]["command"] = list(run.spec.command)
    for labels in (document["metadata"]["labels"], document["spec"]["template"]["metadata"]["labels"]):
        labels.pop(render.CERT_LABEL, None)
        labels[LABEL] = run.name
    if uid:
        document["metadata"]["ownerReferences"] = [
            {"apiVersion": models.API_VERSION, "kind": KIND, "name": run.name, "uid": uid, "controller": True}
        ]
    with contextlib.suppress(kube_errors.AlreadyExists):  # made by a runner killed before recording it: adopt
        rest.create(api, rest.group_path("batch", "v1", "jobs", namespace), document, what=job_name)


def _collect(api: KubeApi, run: WorkloadRun, namespace: str, status: WorkloadRunStatus, *, now: str) -> None:
    try:
        found = rest.get(api, rest.group_path("batch", "v1", "jobs", namespace, status.job), what=str(status.job))
    except errors.NotFound:
        status.phase, status.message, status.completionTime = models.Phase.FAILED, "cancelled: the job was deleted", now
        return
    state = jobs.status_of(found)
    if state is None:
        return
    log = jobs.first_pod_log(api, namespace, str(status.job))
    status.value = extract(run.spec.metric, log)
    measured = {run.spec.metric.name: status.value} if status.value is not None else {}
    violation = compile_threshold(run.spec, where="spec").check(measured)
    if state == "Failed":
        status.phase, status.message = models.Phase.FAILED, "the workload failed (job Failed)"
    elif violation is not None:
        status.phase, status.message = models.Phase.FAILED, violation.message
    elif status.value is None:
        status.phase = models.Phase.SUCCEEDED
        status.message = f"completed; the metric rule found no {run.spec.metric.name}"
    else:
        status.phase, status.message = models.Phase.SUCCEEDED, f"{run.spec.metric.name} = {status.value:g}"
    status.completionTime = now


def create(api: KubeApi, run: WorkloadRun, namespace: str) -> None:
    rest.create(
        api, RESOURCE.path(namespace), run.creation_document(namespace), what=RESOURCE.what(run.name, namespace)
    )


def get(api: KubeApi, namespace: str, name: str) -> WorkloadRun:
    return WorkloadRun.model_validate(
        rest.get(api, RESOURCE.path(namespace, name), what=RESOURCE.what(name, namespace))
    )


def list_all(api: KubeApi, namespace: str | None) -> list[WorkloadRun]:
    return [WorkloadRun.model_validate(i) for i in rest.list_items(api, RESOURCE.path(namespace))]


def list_readable(api: KubeApi, namespace: str | None) -> listing.Listing[WorkloadRun]:
    """Like ``list_all``, but a run that does not parse is skipped and named, not fatal."""
    return listing.parse(rest.list_items(api, RESOURCE.path(namespace)), WorkloadRun, what=RESOURCE.what)


def lease_name(name: str) -> str:
    """The run's Lease: held by ``run --wait`` or by the controller, never both (a Certification
    of the same name has its own Lease, named after it alone)."""
    return f"{name}.workloadrun"


def finished(run: WorkloadRun) -> bool:
    return run.status.phase in (models.Phase.SUCCEEDED, models.Phase.FAILED)


def drive(
    api: KubeApi,
    *,
    namespace: str,
    name: str,
    timeout: float | None,
    me: str | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> tuple[WorkloadRun, bool]:
    """Hold the run's Lease and step until the run ends or ``timeout`` seconds of cluster time pass,
    a step every ``leasing.SETTINGS.poll_seconds`` of cluster time (``leasing.drive``).

    Whoever holds the Lease steps the run (this CLI or ``nvcrectl controller``); a waiter reads the
    status until the holder finishes, or takes over once the holder's Lease expires. Returns
    (run, timed_out).
    """
    from shared import clock

    ticker = clock.for_api_client(api)
    seen: list[WorkloadRun] = []  # the run as last stepped or read

    def step_once() -> leasing.Turn:
        run = step(api, namespace=namespace, name=name, clock=ticker)
        seen[:] = [run]
        return leasing.Turn(f"{name}: {run.status.phase or 'Pending'}: {run.status.message or ''}", finished(run))

    def holder_finished() -> bool:
        seen[:] = [get(api, namespace, name)]
        return finished(seen[0])

    timed_out = leasing.drive(
        api,
        namespace=namespace,
        lease=lease_name(name),
        clock=ticker,
        step=step_once,
        ended=holder_finished,
        timeout=timeout,
        me=me,
        on_progress=on_progress,
    )
    return seen[0], timed_out


def data(run: WorkloadRun) -> dict[str, Any]:
    """Plain data for ``report``/``status`` -o json|yaml; ``passed`` says how the run ended."""
    st = run.status
    return {
        "name": run.name,
        "namespace": run.metadata.namespace,
        "phase": st.phase.value if st.phase else None,
        "passed": st.phase is models.Phase.SUCCEEDED,
        "metric": run.spec.metric.name,
        "value": st.value,
        "threshold": run.spec.threshold,
        "nodes": list(st.nodes),
        "job": st.job,
        "message": st.message,
        "startTime": st.startTime,
        "completionTime": st.completionTime,
    }


def cancel(api: KubeApi, namespace: str, name: str) -> WorkloadRun:
    """Delete the Job (if launched) and record the run as Failed, cancelled; a finished run stays as it is."""
    from shared import clock

    raw = rest.get(api, RESOURCE.path(namespace, name), what=RESOURCE.what(name, namespace))
    run = WorkloadRun.model_validate(raw)
    if run.status.phase in (models.Phase.SUCCEEDED, models.Phase.FAILED):
        return run
    job = run.status.job or job_name(name)
    jobs.delete(api, rest.group_path("batch", "v1", "jobs", namespace, job), what=job)
    status = run.status.model_copy(
        update={
            "phase": models.Phase.FAILED,
            "message": "cancelled: the job was deleted",
            "completionTime": clock.for_api_client(api).now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
    )
    return _write(api, namespace, raw, run, status)
