"""The dsx-cluster-tools chart as data, and ``nvsentinel manifests`` / ``nvcrectl manifests``.

Covers: Chart.yaml names the project version; deploy/helm/dsx-cluster-tools is the chart; the
chart's nvsentinel sections (rule sets included) equal the shipped default values, and the
ConfigMap the controller reads loads into the same configuration; the CRD templates equal the
resource models; fixed workload names, labels, image, probes, metrics port and scrape annotations;
monitor mode by default; each component optional; values files, ``--set`` and ``--set-string``
layered in Helm's order, with helm's messages for a bad expression;
each program's ``manifests`` is its Namespace, then its share of the chart rendering, object by object; the
two shares make up the whole chart; bad flags and broken templates are one-line errors, exit 2.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from shared import errors, yamlio
from shared.chart import crds as chart_crds
from shared.chart import manifests

ROOT = Path(__file__).resolve().parent.parent.parent
NS = "nvsentinel"
CONTROLLERS = ("nvsentinel-controller", "nvcre-controller")
MONITORS = tuple(f"nvsentinel-monitor-{k}" for k in ("xid", "dcgm", "nic", "csp"))


def render(*sets: str, namespace: str = NS, files: tuple[Path, ...] = ()) -> list[dict[str, Any]]:
    return manifests.render(manifests.Request(values_files=files, set_values=sets, namespace=namespace))


def named(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    [found] = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def key(obj: dict[str, Any]) -> tuple[str, str, str]:
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


# ------------------------------------------------------------------ chart metadata and values
def test_the_chart_carries_the_project_version_and_lives_where_the_docs_say() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    meta = manifests.chart_metadata()
    assert (meta["name"], meta["version"], meta["appVersion"]) == ("dsx-cluster-tools", version, version)
    published = ROOT / "deploy" / "helm" / "dsx-cluster-tools"
    assert (published / "Chart.yaml").read_text() == (ROOT / "shared/chart/files/Chart.yaml").read_text()
    assert sorted(p.name for p in (published / "templates").iterdir()) == sorted(
        p.name for p in (ROOT / "shared/chart/files/templates").iterdir()
    )


def test_the_chart_values_carry_the_shipped_default_values_rule_sets_included() -> None:
    shipped = yamlio.load_file(ROOT / "shared/health/rules/values.yaml")
    chart = manifests.default_values()
    assert chart["fault-quarantine"]["ruleSets"] == shipped["fault-quarantine"]["ruleSets"]
    for section, value in shipped.items():
        if section == "global":
            assert {k: chart["global"][k] for k in value} == value
            continue
        assert chart[section] == value, f"chart values section {section} differs from the default values"


def test_the_controllers_configmap_loads_into_the_default_configuration(tmp_path: Path) -> None:
    from shared.operate import config

    cm = named(render(), "ConfigMap", "nvsentinel-values")
    path = tmp_path / "values.yaml"
    path.write_text(cm["data"]["values.yaml"])
    ours, defaults = config.load(path), config.load(None)
    assert ours.health.settings.model_dump(by_alias=True) == defaults.health.settings.model_dump(by_alias=True)
    assert ours.health.dry_run is True
    shipped = yamlio.load_file(ROOT / "shared/health/rules/values.yaml")
    assert set(shipped) <= set(yamlio.loads(cm["data"]["values.yaml"]))


def test_the_crd_templates_equal_the_resource_models() -> None:
    objects = render()
    for spec in chart_crds.TEMPLATES:
        want = chart_crds.expected(spec)
        assert named(objects, "CustomResourceDefinition", want["metadata"]["name"]) == want, (
            f"{spec.file} is stale: run `python -m shared.chart.crds`"
        )


# ------------------------------------------------------------------ objects
def _pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = obj["spec"]["template"]["spec"]
    return spec


def test_workloads_have_the_fixed_names_labels_image_and_their_own_service_account() -> None:
    objects = render("monitors.csp.enabled=true")
    workloads = sorted((o["kind"], o["metadata"]["name"]) for o in objects if o["kind"] in ("Deployment", "DaemonSet"))
    assert workloads == sorted([("Deployment", n) for n in CONTROLLERS] + [("DaemonSet", n) for n in MONITORS])
    for kind, name in workloads:
        obj = named(objects, kind, name)
        labels = obj["spec"]["template"]["metadata"]["labels"]
        assert labels["app.kubernetes.io/name"] == "dsx-cluster-tools"
        assert labels["app.kubernetes.io/component"] == name
        assert obj["spec"]["selector"]["matchLabels"].items() <= labels.items()
        pod = _pod_spec(obj)
        assert pod["serviceAccountName"] == name
        assert named(objects, "ServiceAccount", name)["metadata"]["namespace"] == NS
        [container] = pod["containers"]
        assert container["image"] == "ghcr.io/dsx-cluster-tools/dsx-cluster-tools:0.1.0"
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert container["securityContext"]["readOnlyRootFilesystem"] is True


def test_controllers_expose_metrics_with_scrape_annotations_and_probes_on_them() -> None:
    objects = render("global.metricsPort=9400")
    for name in CONTROLLERS:
        deployment = named(objects, "Deployment", name)
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        assert annotations == {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": "9400",
            "prometheus.io/path": "/metrics",
        }
        [container] = _pod_spec(deployment)["containers"]
        assert container["ports"] == [{"name": "metrics", "containerPort": 9400}]
        assert "--metrics-addr=0.0.0.0:9400" in container["args"]
        for probe in ("livenessProbe", "readinessProbe"):
            assert container[probe]["httpGet"] == {"path": "/healthz", "port": "metrics"}


def test_the_workloads_run_the_commands_the_programs_have() -> None:
    from typer.main import get_command

    from nvcre.main import build_app as nvcre_app
    from nvsentinel.main import build_app as nvsentinel_app

    programs = {"nvsentinel": get_command(nvsentinel_app()), "nvcrectl": get_command(nvcre_app())}
    objects = render("monitors.csp.enabled=true")
    for obj in objects:
        if obj["kind"] not in ("Deployment", "DaemonSet"):
            continue
        [container] = _pod_spec(obj)["containers"]
        program, *path = container["command"]
        command: Any = programs[program]
        for word in path:
            command = command.commands[word]
        flags = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
        for arg in container["args"]:
            assert arg.split("=", 1)[0] in flags, f"{obj['metadata']['name']}: {arg} is not a flag of {path}"


def test_monitor_mode_is_the_default_and_enforcing_is_one_value_away() -> None:
    def dry_run(objects: list[dict[str, Any]]) -> Any:
        return yamlio.loads(named(objects, "ConfigMap", "nvsentinel-values")["data"]["values.yaml"])["global"]["dryRun"]

    assert dry_run(render()) is True
    assert dry_run(render("global.dryRun=false")) is False


@pytest.mark.parametrize(
    ("switch", "gone"),
    [
        ("nvsentinel-controller.enabled=false", "nvsentinel-controller"),
        ("nvcre.enabled=false", "nvcre-controller"),
        ("monitors.xid.enabled=false", "nvsentinel-monitor-xid"),
        ("monitors.dcgm.enabled=false", "nvsentinel-monitor-dcgm"),
        ("monitors.nic.enabled=false", "nvsentinel-monitor-nic"),
    ],
    ids=lambda v: v.split("=")[0] if "=" in v else None,
)
def test_each_component_is_optional_and_takes_only_its_own_objects(switch: str, gone: str) -> None:
    before, after = render(), render(switch)
    removed = {key(o) for o in before} - {key(o) for o in after}
    assert removed and all(manifests.component(o) == gone for o in before if key(o) in removed)
    assert not [o for o in after if manifests.component(o) == gone]


def test_crds_off_renders_no_crd_and_monitors_off_drop_their_shared_role() -> None:
    assert not [o for o in render("crds.enabled=false") if o["kind"] == "CustomResourceDefinition"]
    off = render("monitors.xid.enabled=false,monitors.dcgm.enabled=false,monitors.nic.enabled=false")
    assert not [o for o in off if manifests.component(o).startswith("nvsentinel-monitor")]


def test_the_release_namespace_and_the_certification_namespace_are_values() -> None:
    objects = render("nvcre.watchNamespace=certs", namespace="ops")
    assert named(objects, "Deployment", "nvsentinel-controller")["metadata"]["namespace"] == "ops"
    assert named(objects, "Role", "nvcre-controller")["metadata"]["namespace"] == "certs"
    assert named(objects, "RoleBinding", "nvcre-controller")["subjects"][0]["namespace"] == "ops"
    [container] = _pod_spec(named(objects, "Deployment", "nvcre-controller"))["containers"]
    assert "--namespace=certs" in container["args"]


def test_objects_come_in_helms_install_order() -> None:
    kinds = [o["kind"] for o in render()]
    order = [k for k in manifests.INSTALL_ORDER if k in kinds]
    assert sorted(kinds, key=order.index) == kinds
    assert kinds.index("CustomResourceDefinition") < kinds.index("Deployment")


# ------------------------------------------------------------------ values and --set
@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("novalue", 'key "novalue" has no value'),
        ("a,b=1", 'key "a" has no value (cannot end with ,)'),
        ("a[x]=1", 'error parsing index: strconv.Atoi: parsing "x": invalid syntax'),
        ("a..b=1", 'key map "a" has no value'),
        ("a={x", "list must terminate with '}'"),
    ],
    ids=lambda v: v if isinstance(v, str) and "has" not in v else None,
)
def test_a_bad_set_is_invalid_input_naming_the_flag_and_expression(expression: str, message: str) -> None:
    """The messages are helm's (pkg/strvals/parser.go); tests/ship/test_helm_parity.py compares them."""
    with pytest.raises(errors.InvalidInput) as caught:
        render(expression)
    assert (caught.value.where, caught.value.message) == (f"--set {expression!r}", message)


def test_set_reads_into_the_values_files_and_set_string_comes_after_every_set(tmp_path: Path) -> None:
    """helm's MergeValues: files, then every --set into them, then every --set-string."""
    values = tmp_path / "v.yaml"
    values.write_text("global:\n  tolerations: [{operator: Exists}, {key: a}]\n")
    request = manifests.Request(
        values_files=(values,),
        set_values=("global.tolerations[1].effect=NoSchedule", "nvcre.watchNamespace=1"),
        set_string_values=("global.metricsPort=9100",),
    )
    merged = manifests.values_for(request)
    assert merged["global"]["tolerations"] == [{"operator": "Exists"}, {"key": "a", "effect": "NoSchedule"}]
    assert (merged["nvcre"]["watchNamespace"], merged["global"]["metricsPort"]) == (1, "9100")
    later = manifests.values_for(
        manifests.Request(set_values=("global.metricsPort=1",), set_string_values=("global.metricsPort=2",))
    )
    assert later["global"]["metricsPort"] == "2"


def test_set_through_a_value_of_another_type_fails_with_helms_message(tmp_path: Path) -> None:
    values = tmp_path / "v.yaml"
    values.write_text("global: {metricsPort: 9100}\n")
    with pytest.raises(errors.InvalidInput) as caught:
        render("global.metricsPort.x=1", files=(values,))
    assert caught.value.message == (
        "unable to parse key: interface conversion: interface {} is float64, not map[string]interface {}"
    )


def test_null_deletes_a_chart_key_and_stays_null_where_the_chart_has_none() -> None:
    merged = manifests.values_for(manifests.Request(set_values=("global.dryRun=null,global.extra=null",)))
    assert "dryRun" not in merged["global"] and merged["global"]["extra"] is None


def test_values_files_then_sets_layer_like_helm_lists_replaced_null_deletes(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("global: {metricsPort: 1111}\nfault-quarantine:\n  ruleSets: []\n  labelPrefix: x/\n")
    second.write_text("global: {metricsPort: 2222}\nnvsentinel: null\n")
    request = manifests.Request(values_files=(first, second), set_values=("global.metricsPort=3333",))
    values = manifests.values_for(request)
    assert values["global"]["metricsPort"] == 3333
    assert values["global"]["image"]["repository"] == "ghcr.io/dsx-cluster-tools/dsx-cluster-tools"
    assert values["fault-quarantine"]["ruleSets"] == [] and values["fault-quarantine"]["labelPrefix"] == "x/"
    assert values["fault-quarantine"]["circuitBreaker"]["enabled"] is True
    assert "nvsentinel" not in values


# ------------------------------------------------------------------ the two programs
@pytest.mark.parametrize("program", ["nvsentinel", "nvcrectl"])
def test_manifests_equals_the_chart_rendering_object_by_object(program: str, run_cli: Any, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text("global: {dryRun: false}\nmonitors: {csp: {enabled: true}}\n")
    result = run_cli(program, "manifests", "-n", "ops", "--values", str(values), "--set", "global.metricsPort=9500")
    assert result.code == 0, result.stderr
    documents = yamlio.loads_all(result.stdout)
    namespaces = [d for d in documents if d["kind"] == "Namespace"]
    printed = documents[len(namespaces) :]
    assert namespaces[0] == manifests.namespace_object(program, "ops")  # first, so a fresh cluster takes the rest
    chart = render("global.metricsPort=9500", namespace="ops", files=(values,))
    share = [o for o in chart if manifests.component(o).startswith(manifests.PROGRAMS[program])]
    assert [key(o) for o in printed] == [key(o) for o in share]
    for ours, theirs in zip(printed, share, strict=True):
        assert ours == theirs, key(ours)
    as_json = run_cli(
        program, "manifests", "-n", "ops", "--values", str(values), "--set", "global.metricsPort=9500", "-o", "json"
    )
    assert json.loads(as_json.stdout) == {"apiVersion": "v1", "kind": "List", "items": documents}


def test_the_two_programs_share_out_the_whole_chart() -> None:
    chart = render("monitors.csp.enabled=true")
    nvsentinel = manifests.for_program("nvsentinel", chart)
    nvcre = manifests.for_program("nvcrectl", chart)
    assert sorted(map(key, nvsentinel + nvcre)) == sorted(map(key, chart))
    assert {manifests.component(o) for o in nvcre} == {"nvcre-controller", "nvcre-crds"}
    assert {o["metadata"]["name"] for o in nvsentinel if o["kind"] == "CustomResourceDefinition"} == {
        "healthevents.nvsentinel.nvidia.com",
        "validationrequests.nvsentinel.nvidia.com",
    }


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["-o", "table"], "error: --output: must be one of yaml, json, got 'table'"),
        (["--set", "monitors"], """error: --set 'monitors': key "monitors" has no value"""),
        (["--set-string", "a[0"], "error: --set-string 'a[0': error parsing index: EOF"),
        (["-n", "Bad_NS"], "error: --namespace: 'Bad_NS' is not a valid namespace name"),
        (["--values", "missing.yaml"], "error: missing.yaml: file does not exist"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(args: list[str], line: str, run_cli: Any) -> None:
    result = run_cli("nvsentinel", "manifests", *args)
    assert (result.code, result.stderr.strip(), result.stdout) == (2, line, "")


def test_a_template_outside_the_subset_names_its_file_and_line(tmp_path: Path) -> None:
    copy = tmp_path / "chart"
    shutil.copytree(ROOT / "shared/chart/files", copy)
    target = copy / "templates" / "nvcre-controller.yaml"
    lines = target.read_text().splitlines()
    lines.insert(4, "  {{- range .Values.global.tolerations }}x{{ end }}")
    target.write_text("\n".join(lines))
    with pytest.raises(errors.InvalidInput) as caught:
        manifests.render(manifests.Request(), root=copy)
    assert caught.value.where == "templates/nvcre-controller.yaml:5"


def test_the_lifecycle_roles_follow_its_switches_and_provider_namespaces() -> None:
    def lifecycle(objects: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
        return {key(o) for o in objects if o["metadata"]["name"].startswith("nvsentinel-lifecycle")}

    on = lifecycle(render())
    assert {(k, ns) for k, ns, _ in on} == {
        ("ClusterRole", ""),
        ("ClusterRoleBinding", ""),
        ("Role", "nvsentinel"),
        ("RoleBinding", "nvsentinel"),
    }
    assert lifecycle(render("lifecycle-manager.enabled=false")) == set()
    assert on - lifecycle(render("lifecycle-manager.runCertificationController=false")) == {
        ("Role", "nvsentinel", "nvsentinel-lifecycle-certify"),
        ("RoleBinding", "nvsentinel", "nvsentinel-lifecycle-certify"),
    }
    moved = lifecycle(render("lifecycle-manager.config.providers.k8s-job-provider.namespace=jobs"))
    assert ("Role", "jobs", "nvsentinel-lifecycle-jobs") in moved
