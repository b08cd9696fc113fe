"""The chart rendered by real helm (4.1 and 3.19, pinned by ``make setup``) equals our rendering.

Covers: ``helm lint --strict`` passes with both majors; ``helm template`` of the chart, with default
values and with ``--set``, ``--set-string``, ``-f`` and ``-n`` combinations (``x={}``, ``null``,
``1.5``, nested lists, a values-file number of 1e6), prints byte for byte the stream our renderer
gives (``manifests.documents``: template text, Helm's document split and install order), and
``nvsentinel manifests`` plus ``nvcrectl manifests`` print the same objects (keyed by apiVersion,
kind, namespace and name; Namespace objects aside, which helm does not render). On small charts
written here: every ``--set``/``--set-string`` expression of a table and of a seeded random sample
gives the values helm gives, or helm's error message (helm 4 ignores an unterminated index
``a[`` that helm 3 and we refuse: docs/compatibility.md); values files, ``--set`` and
``--set-string`` are layered and coalesced over the chart's values as helm does (nulls, lists,
type conflicts); ``toYaml`` of a corpus of awkward values, and Go's printing of numbers and strings
(``{{ }}``, ``quote``, ``toJson``), are helm's byte for byte.

helm runs with HOME, XDG and HELM_* homes under the test's tmp dir (tests/simfixtures.py) and an
empty kubeconfig: ``template`` and ``lint`` never contact a cluster.
"""

from __future__ import annotations

import base64
import json
import random
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shared import errors, yamlio
from shared.chart import goyaml, manifests
from shared.chart import values as chart_values
from tests import clients, simfixtures

ROOT = Path(__file__).resolve().parent.parent.parent
CHART = ROOT / "deploy" / "helm" / "dsx-cluster-tools"
RELEASE = manifests.CHART_NAME
Helm = Callable[..., subprocess.CompletedProcess[str]]


def _runner(tmp_path_factory: pytest.TempPathFactory, client: clients.Client) -> Helm:
    home = tmp_path_factory.mktemp(client.name)
    kubeconfig = home / "kubeconfig"
    kubeconfig.write_text("")
    return simfixtures.helm_runner(kubeconfig, home / "home", client=client)


@pytest.fixture(scope="module")
def helm4(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    return _runner(tmp_path_factory, clients.HELM)


@pytest.fixture(scope="module")
def helm3(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    return _runner(tmp_path_factory, clients.HELM3)


@pytest.fixture(scope="module", params=["helm4", "helm3"])
def each_helm(request: pytest.FixtureRequest) -> Helm:
    runner: Helm = request.getfixturevalue(request.param)
    return runner


# ------------------------------------------------------------------ the chart
VALUES_FILE = """\
global:
  metricsPort: 1000000
  imagePullSecrets: [{name: regcred}]
  systemNodeSelector: {pool: system}
  tolerations: [{key: gpu, operator: Exists}, {key: b}]
monitors: {csp: {enabled: true}}
fault-quarantine: {ruleSets: []}
nvcre: {podAnnotations: {team: gpu}}
"""
CASES: dict[str, list[str]] = {
    "defaults": [],
    "namespace-and-sets": [
        "-n",
        "ops",
        "--set",
        "global.dryRun=false,global.metricsPort=9500,nvcre.watchNamespace=certs",
    ],
    "empty-list-null-decimal": [
        "--set",
        "global.imagePullSecrets={}",
        "--set",
        "nvcre.watchNamespace=null,global.metricsPort=1.5",
    ],
    "nested-lists": [
        "--set",
        "global.tolerations[0].key=gpu,global.tolerations[0].operator=Exists,global.tolerations[2].effect=NoSchedule",
        "--set",
        "global.systemNodeTolerations[1][0]=x",
    ],
    "set-string-after-set": [
        "--set-string",
        "global.nodeSelector.zone=1,nvsentinel-controller.podAnnotations.a=true,"
        "nvsentinel-controller.podAnnotations.b=<no value>",
        "--set",
        "global.nodeSelector.zone=2,nvsentinel.workers=08",
    ],
    "values-file": [
        "-f",
        "VALUES",
        "--set",
        "global.tolerations[1].effect=NoSchedule,crds.enabled=false,monitors.xid.enabled=false",
    ],
    "observability": [
        "--set",
        "observability.grafanaDashboard.enabled=true,observability.prometheusRule.enabled=true,"
        "observability.prometheusRule.labels.release=kps,observability.prometheusRule.quarantinedShare=0.25",
    ],
    "lifecycle": [
        "--set",
        "lifecycle-manager.config.providers.k8s-job-provider.namespace=jobs",
        "--set",
        "lifecycle-manager.runCertificationController=false",
    ],
}


@pytest.fixture(scope="module")
def values_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("values") / "values.yaml"
    path.write_text(VALUES_FILE)
    return path


def _args(case: str, values_file: Path) -> list[str]:
    return [str(values_file) if arg == "VALUES" else arg for arg in CASES[case]]


def _request(args: list[str]) -> manifests.Request:
    options: dict[str, list[str]] = {"-n": [], "-f": [], "--set": [], "--set-string": []}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        options[flag].append(value)
    return manifests.Request(
        values_files=tuple(Path(p) for p in options["-f"]),
        set_values=tuple(options["--set"]),
        set_string_values=tuple(options["--set-string"]),
        namespace=(options["-n"] or ["nvsentinel"])[-1],
    )


def _stream(documents: list[manifests.Document], chart_name: str) -> str:
    """What ``helm template`` prints for these documents (pkg/action/install.go)."""
    return "".join(f"---\n# Source: {chart_name}/{doc.template}\n{doc.text}\n" for doc in documents)


_TEMPLATE_CACHE: dict[tuple[str, str], str] = {}


def _helm_template(helm: Helm, case: str, values_file: Path) -> str:
    args = _args(case, values_file)
    if "-n" not in args:
        args = ["-n", "nvsentinel", *args]
    key = (str(helm), case)
    if key not in _TEMPLATE_CACHE:
        _TEMPLATE_CACHE[key] = helm("template", RELEASE, str(CHART), *args).stdout
    return _TEMPLATE_CACHE[key]


@pytest.mark.parametrize("extra", [[], ["-f", "VALUES"]], ids=["defaults", "values-file"])
def test_helm_lint_passes_strictly(each_helm: Helm, extra: list[str], values_file: Path) -> None:
    args = [str(values_file) if arg == "VALUES" else arg for arg in extra]
    done = each_helm("lint", "--strict", str(CHART), *args)
    assert "1 chart(s) linted, 0 chart(s) failed" in done.stdout


@pytest.mark.parametrize("case", list(CASES))
def test_helm_template_prints_our_rendering_byte_for_byte(
    case: str, helm4: Helm, helm3: Helm, values_file: Path
) -> None:
    ours = _stream(manifests.documents(_request(_args(case, values_file))), manifests.CHART_NAME)
    assert _helm_template(helm4, case, values_file) == ours
    assert _helm_template(helm3, case, values_file) == ours


def _key(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = obj.get("metadata") or {}
    return obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"]


def _objects(text: str) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    found = [o for o in yamlio.loads_all(text) if isinstance(o, dict) and o.get("kind") != "Namespace"]
    keyed = {_key(o): o for o in found}
    assert len(keyed) == len(found), "two objects share a key"
    return keyed


@pytest.mark.parametrize("case", ["defaults", "empty-list-null-decimal", "set-string-after-set", "values-file"])
def test_the_manifests_commands_print_the_objects_helm_renders(
    case: str, helm4: Helm, values_file: Path, run_cli: Any
) -> None:
    args = _args(case, values_file)
    printed = ""
    for program in ("nvsentinel", "nvcrectl"):
        result = run_cli(program, "manifests", "-n", "nvsentinel", *args)
        assert result.code == 0, result.stderr
        printed += result.stdout if result.stdout.startswith("---") else "---\n" + result.stdout
    ours, theirs = _objects(printed), _objects(_helm_template(helm4, case, values_file))
    assert sorted(ours) == sorted(theirs)
    for key, obj in theirs.items():
        assert ours[key] == obj, key


# ------------------------------------------------------------------ small charts
def _chart(root: Path, name: str, templates: dict[str, str], values: str = "") -> Path:
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\nappVersion: 0.1.0\n")
    (root / "values.yaml").write_text(values)
    for file, text in templates.items():
        (root / "templates" / file).write_text(text)
    return root


VALUES_PROBE = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  v: {{ toJson .Values | quote }}\n"


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A chart printing ``.Values`` as JSON, with a template inside our subset."""
    return _chart(tmp_path_factory.mktemp("probe") / "probe", "probe", {"cm.yaml": VALUES_PROBE})


def _ours(chart: Path, flags: list[tuple[str, str]], files: tuple[Path, ...] = ()) -> str:
    """Our ``helm template`` stream for ``chart``, or helm's error line for our InvalidInput."""
    request = manifests.Request(
        values_files=files,
        set_values=tuple(e for f, e in flags if f == "--set"),
        set_string_values=tuple(e for f, e in flags if f == "--set-string"),
    )
    try:
        return _stream(manifests.documents(request, root=chart), chart.name)
    except errors.InvalidInput as exc:
        flag, _, expression = str(exc.where).partition(" ")
        assert expression in (repr(e) for _, e in flags), exc.where
        return f"Error: failed parsing {flag} data: {exc.message}"


def _theirs(helm: Helm, chart: Path, flags: list[tuple[str, str]], files: tuple[Path, ...] = ()) -> str:
    args = [x for pair in flags for x in pair] + [x for f in files for x in ("-f", str(f))]
    done = helm("template", RELEASE, str(chart), *args, check=False)
    return done.stdout if done.returncode == 0 else done.stderr.strip().splitlines()[0]


EXPRESSIONS = [
    "a.b=1,c[0]=x,d={p,q}",
    "a=1.5,b=010,c=0,d=-0,e=-01,f=+5,g=True,h=NULL,i=FALSE",
    "x={}",
    "x={,}",
    "x={a,null,1}",
    "x=9223372036854775808,y=9223372036854775807,z=1e3,w=0x10",
    "a=,b=2",
    "a=x\\",
    "a=x=y:z",
    "l[2]=x",
    "l[0][1]=x",
    "l[1].a=x,l[0]=y",
    "l[0].a=",
    "l[0]=x,l[0].a=2",
    r"a\.b=1,c\,d=2,e\=f=3",
    r"a={x\,y,z}",
    " a = 1 ",
    "u=é\t<b>&\u2028",
    "=1",
    "a[0]",
    "a",
    "a,",
    "a=1,,b=2",
    "a.b",
    "a[x]=1",
    "a..b=1",
    "a[-1]=1",
    "a[65537]=1",
    "a[0]xy=1",
    "a={x",
    "x={a,{b}}",
    "a=1,a.b=2",
    "a.b=1,a[0]=2",
    "l[0]=x,l[0][1]=2",
    ".".join("a" * 32) + "=1",
]


def _random_flags(rng: random.Random) -> list[tuple[str, str]]:
    atoms = ["a", "b", "0", "1", "01", "-1", "=", "=", ",", ".", "[", "]", "[0]", "[1]", "{", "}", "\\", "null"]
    atoms += ["True", "x y", "1.5", "a=", "b.c=", "l[0]="]
    return [
        (rng.choice(["--set", "--set", "--set-string"]), "".join(rng.choice(atoms) for _ in range(rng.randint(1, 8))))
        for _ in range(rng.choice([1, 1, 2]))
    ]


SAMPLE = [_random_flags(random.Random(seed)) for seed in range(40)]
# helm 4 takes the io.EOF it wraps for an unterminated index as the end of the input.
_HELM4_IGNORES = "error parsing index: EOF"


@pytest.mark.parametrize(
    "flags",
    [[("--set", e)] for e in EXPRESSIONS] + [[("--set-string", e)] for e in EXPRESSIONS[:8]] + SAMPLE,
    ids=lambda flags: " ".join(f"{f} {e}" for f, e in flags)[:60],
)
def test_set_expressions_read_as_helm_reads_them(
    flags: list[tuple[str, str]], probe: Path, helm4: Helm, helm3: Helm
) -> None:
    ours = _ours(probe, flags)
    assert _theirs(helm3, probe, flags) == ours
    theirs4 = _theirs(helm4, probe, flags)
    if ours.endswith(_HELM4_IGNORES):
        assert not theirs4.startswith("Error:")
    else:
        assert theirs4 == ours


CHART_VALUES = """\
a: 1
m: {x: 1, sub: {z: 2}, keep: k, gone: null}
l: [1, 2]
s: str
t: {u: 1}
big: 1000000
f: 0.5
"""
USER_VALUES = "m: {x: null, w: null, sub: {q: 1}}\nl: [5]\nt: 3\ns: {q: 1}\nnum: 7\n"
LAYERINGS = {
    "file": ([], True),
    "file-and-sets": ([("--set", "l[2]=7,newk=null,a=null"), ("--set-string", "m.sub.z=9")], True),
    "set-string-before-set": ([("--set-string", "a=2"), ("--set", "a=3,m.sub=null")], False),
    "through-a-file-number": ([("--set", "num.x=1")], True),
    "through-a-file-list": ([("--set", "l.x=1")], True),
}


@pytest.mark.parametrize("layering", list(LAYERINGS))
def test_values_files_sets_and_chart_values_layer_as_helms_do(
    layering: str, helm4: Helm, helm3: Helm, tmp_path: Path
) -> None:
    chart = _chart(tmp_path / "layers", "layers", {"cm.yaml": VALUES_PROBE}, CHART_VALUES)
    user = tmp_path / "user.yaml"
    user.write_text(USER_VALUES)
    flags, with_file = LAYERINGS[layering]
    files = (user,) if with_file else ()
    ours = _ours(chart, flags, files)
    assert _theirs(helm4, chart, flags, files) == ours
    assert _theirs(helm3, chart, flags, files) == ours


# ------------------------------------------------------------------ toYaml and Go's printing
TO_YAML_TEMPLATE = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\ndata:\n"
    "{{- range $k, $v := .Values }}\n  {{ $k }}: {{ toYaml $v | b64enc }}\n{{- end }}\n"
)
_WORDS = ["a", "z", "A", "é", "x y", " ", ":", ": ", "#", " #", "-", "- ", "?", "'", '"', "\\", "\n", "\n\n"]
_WORDS += ["\t", "\r", "\x85", "\u2028", "\x01", "😀", "\ufeff", "\xa0", "yes", "no", "on", "y", "N", "null"]
_WORDS += ["~", "true", "1", "01", "08", "0x1F", "1.5", "1e3", ".5", "1_000", "1:20", "2001-12-14", "+", "-1"]
_WORDS += ["<<", "[", "{", "}", "*", "&", "!", "|", ">", "%", "@", "`", ",", "---", "...", "0", "9", "a2", "a10"]


def _word(rng: random.Random) -> str:
    if rng.random() < 0.1:
        return " ".join(rng.choice(["lorem", "ipsum", "a&&b", "x==y", "'q'", '"d"']) for _ in range(rng.randint(5, 40)))
    return "".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 4)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 3 and roll < 0.25:
        return {_word(rng) or "k": _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if depth < 3 and roll < 0.4:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    roll = rng.random()
    if roll < 0.1:
        return rng.choice([True, False, None])
    if roll < 0.2:
        return rng.choice([0, 1, -5, 1000000, 123456789, 2**53 + 1, 1.5, 1e21, 1e-7, 0.1, 1234567.5, -0.25])
    return _word(rng)


def test_to_yaml_prints_what_helms_prints(helm4: Helm, tmp_path: Path) -> None:
    """A seeded corpus of awkward keys and values through go-yaml v2 (quoting, folding, order)."""
    rng = random.Random(7)
    corpus = {f"c{i:03d}": _value(rng, 1) for i in range(300)}
    chart = _chart(tmp_path / "toyaml", "toyaml", {"cm.yaml": TO_YAML_TEMPLATE})
    # JSON is YAML; characters YAML cannot carry raw are escaped.
    text = re.sub(
        "[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]",
        lambda m: f"\\u{ord(m.group()):04x}",
        json.dumps(corpus, ensure_ascii=False),
    )
    values = tmp_path / "corpus.json"
    values.write_text(text)
    printed = yamlio.loads(helm4("template", RELEASE, str(chart), "-f", str(values)).stdout)["data"]
    helm_view = chart_values.helm_shaped(json.loads(text))
    for key, value in helm_view.items():
        assert base64.b64decode(printed.get(key) or "").decode() == goyaml.to_yaml(value), (key, corpus[key])


PRINTING_TEMPLATE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: printing
data:
  file-numbers: "{{ .Values.num.a }} {{ .Values.num.b }} {{ .Values.num.c }} {{ .Values.num.d }} {{ .Values.num.e }}"
  set-numbers: "{{ .Values.i.a }} {{ .Values.i.b }}"
  quoted: {{ .Values.s | quote }}
  quoted-number: {{ .Values.num.a | quote }}
  json: {{ .Values | toJson | quote }}
  yaml: |
    {{- .Values | toYaml | nindent 4 }}
"""
PRINTING_VALUES = 'num: {a: 1000000, b: 0.1, c: 0.00001, d: 123456789, e: 1.5e300}\ns: "é\\t<b>&\\u2028\\u0001"\n'


def test_go_prints_numbers_and_strings_as_our_renderer_does(helm4: Helm, helm3: Helm, tmp_path: Path) -> None:
    chart = _chart(tmp_path / "printing", "printing", {"cm.yaml": PRINTING_TEMPLATE}, PRINTING_VALUES)
    flags = [("--set", "i.a=1000000,i.b=-9223372036854775808")]
    ours = _ours(chart, flags)
    assert "1e+06 0.1 1e-05 1.23456789e+08 1.5e+300" in ours
    assert _theirs(helm4, chart, flags) == ours
    assert _theirs(helm3, chart, flags) == ours
