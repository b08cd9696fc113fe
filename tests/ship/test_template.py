"""The Helm template subset (shared/chart/template.py): what it renders, and what it refuses.

Covers: values, release and chart fields; trim markers; comments; if/else/end with Go's truth;
each function of the subset; Go's printing (``1e+06`` for a large float, ``%q`` escapes, JSON's
HTML escaping) and Helm's toYaml (go-yaml v2's key order, quoting, block scalars, folding);
``and``/``or`` stopping at the deciding argument; variables scoped to their block, parentheses,
``toString``, ``eq``/``ne`` (what upstream AICR's manifests use), and the manifest dialect's
``default``/``nindent``; which values a rendering read; constructs outside the subset (range, with,
define, include, assignment, unknown functions and roots) refused with
``template:line``; text/template's errors for a field or index through nil or a scalar, and for
indenting a non-string; missing values and maps printed without toYaml refused; property tests:
any input either renders or fails with one TemplateError whose line lies inside the template, text
without actions renders to itself, and an unsupported action placed on any line is reported on
that line. tests/ship/test_helm_parity.py checks the same against the helm binaries.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared import yamlio
from shared.chart import goyaml, template
from shared.chart.template import TemplateError

CONTEXT = {
    "Values": {
        "a": {"b": "x", "n": 3, "on": True, "off": False, "empty": "", "list": [1, 2], "map": {"k": "v"}},
        "fault-quarantine": {"enabled": True},
        "port": 9090.0,
        "big": 1000000.0,
        "text": "é\t<b>",
        "null": None,
    },
    "Release": {"Name": "rel", "Namespace": "ns", "Service": "Helm"},
    "Chart": {"Name": "c", "Version": "0.1.0", "AppVersion": "0.1.0"},
}


def render(text: str) -> str:
    return template.render(template.parse(text, name="templates/t.yaml"), CONTEXT)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: {{ .Values.a.b }}", "a: x"),
        ("{{ .Release.Name }}/{{ .Release.Namespace }}", "rel/ns"),
        ("{{ .Chart.Name }}-{{ .Chart.Version }}-{{ .Chart.AppVersion }}", "c-0.1.0-0.1.0"),
        ("{{ .Values.a.n }} {{ .Values.a.on }} {{ .Values.port }}", "3 true 9090"),
        ("a:\n  {{- .Values.a.b }}", "a:x"),
        ("{{ .Values.a.b -}}\n\n  b", "xb"),
        ("x{{/* a comment */}}y{{- /* trimmed */ -}} z", "xyz"),
        ("{{- if .Values.a.on }}yes{{- else }}no{{- end }}", "yes"),
        ("{{- if .Values.a.off }}yes{{- else }}no{{- end }}", "no"),
        ("{{ if .Values.a.empty }}yes{{ end }}|{{ if .Values.missing }}yes{{ end }}", "|"),
        ("{{ .Values.big }} {{ .Values.big | quote }} {{ .Values.port | toJson }}", '1e+06 "1e+06" 9090'),
        ("{{ .Values.text | quote }} {{ .Values.text | toJson }}", '"é\\t<b>" "é\\t\\u003cb\\u003e"'),
        ("{{ .Values.null | quote }}|{{ .Values.null | toYaml }}", "|null"),
        ("{{ and .Values.a.off .Values.missing.deep }} {{ or .Values.a.on .Values.missing.deep }}", "false true"),
        ("{{ .Values.a.off | and .Values.a.on }} {{ .Values.a.n | or .Values.a.empty }}", "false 3"),
        ("{{ if .Values.a.list }}{{ if .Values.a.map }}both{{ end }}{{ end }}", "both"),
        ("{{ if not .Values.a.off }}negated{{ end }}", "negated"),
        ("{{ if and .Values.a.on .Values.a.off }}and{{ end }}{{ if or .Values.a.off .Values.a.n }}or{{ end }}", "or"),
        ('{{ index .Values "fault-quarantine" "enabled" }}', "true"),
        ("{{ .Values.a.b | quote }} {{ .Values.a.n | quote }}", '"x" "3"'),
        ('{{ .Values.a.empty | default "d" }} {{ .Values.nothing | default .Chart.Name }}', "d c"),
        ("m:{{ .Values.a.map | toYaml | nindent 2 }}", "m:\n  k: v"),
        ("{{ .Values.a.list | toYaml | indent 4 }}", "    - 1\n    - 2"),
        ("{{ .Values.a.map | toJson }}", '{"k":"v"}'),
        ("{{ .Values.a.nothing | default .Values.a.map | toYaml }}", "k: v"),
        ("literal }} braces", "literal }} braces"),
        ('{{- $a := index .Values "a" }}{{ $a.b }}-{{ $a.n }}', "x-3"),
        ("{{ $m := .Values.a.map }}{{ if $m }}{{ $m.k }}{{ end }}", "v"),
        ('{{ ne (toString (index .Values.a "off")) "false" }}', "false"),
        ('{{ ne (toString (index .Values.a "gone")) "false" }} {{ toString .Values.big }}', "true 1e+06"),
        ('{{ eq .Values.a.b "y" "x" }} {{ eq .Values.a.n 3 }}', "true true"),
        ("{{ (.Values.a.off | default true) }}", "true"),
        ("{{ .Release.Service }}", "Helm"),
        ("{{ if .Values.a.on }}{{ $v := 1 }}{{ $v }}{{ end }}", "1"),
    ],
    ids=lambda v: v if len(v) < 40 else v[:40],
)
def test_the_subset_renders_like_helm(text: str, expected: str) -> None:
    assert render(text) == expected


def test_a_rendered_map_under_nindent_is_yaml_with_the_same_data() -> None:
    nested = {"rules": [{"expression": "a &&\nb", "list": []}], "empty": {}, "q": '\'"{{ x }}"'}
    context = {**CONTEXT, "Values": {"x": nested}}
    out = template.render(template.parse("top:\n  x:{{ .Values.x | toYaml | nindent 4 }}\n", name="t"), context)
    assert yamlio.loads(out) == {"top": {"x": nested}}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a10": 1, "a2": 2, "B": 3, "a": {}}, "B: 3\na: {}\na2: 2\na10: 1"),
        (
            ["yes", "1", "", "2001-12-14", "1:20", "x y", "- a", ": b", "#c", "d #e"],
            '- "yes"\n- "1"\n- ""\n- "2001-12-14"\n- "1:20"\n- x y\n- \'- a\'\n- \': b\'\n- \'#c\'\n- \'d #e\'',
        ),
        ({"k": "line1\nline2\n"}, "k: |\n  line1\n  line2"),
        ({"k": " lead\nx"}, "k: |2-\n   lead\n  x"),
        ([["a", "b"], [{"c": None}]], "- - a\n  - b\n- - c: null"),
        ({"long": " ".join(["word"] * 25)}, "long: " + " ".join(["word"] * 16) + "\n  " + " ".join(["word"] * 9)),
        ({"n": 1000000.0, "f": 0.1, "e": 1e21, "t": "a\tb"}, 'e: 1e+21\nf: 0.1\n"n": 1000000\nt: "a\\tb"'),
        ("\ufeffab", '"\\uFEFF\\x61\\x62"'),
        ("x", "x"),
        ({"a": "<<", "b": "="}, "a: <<\nb: ="),
    ],
    ids=repr,
)
def test_to_yaml_writes_what_helms_to_yaml_writes(value: object, expected: str) -> None:
    """go-yaml v2 as sigs.k8s.io/yaml drives it; each expected text was printed by helm 4.1's toYaml."""
    assert goyaml.to_yaml(value) == expected


# Characters go-yaml's reader refuses or folds (json.Marshal leaves them raw) make Helm's toYaml
# print something else; the round trip holds for every other text.
_YAML_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\x85\ufffe\uffff", exclude_categories=["Cs"]).filter(
        lambda c: not "\x7f" <= c <= "\x9f"
    ),
    max_size=30,
    # ruamel reads a plain "=" as YAML 1.1's value tag and a plain "<<" value as a merge key (an error);
    # go-yaml v2 writes both plain, as Helm's toYaml does (its resolver has no hint for "=" or "<"),
    # and reads them back as text
).filter(lambda t: t not in ("=", "<<"))
_JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
        _YAML_TEXT,
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_YAML_TEXT, inner, max_size=4)),
    max_leaves=15,
)


@settings(max_examples=150, deadline=None)
@given(_JSON_VALUES)
def test_to_yaml_reads_back_as_the_same_data(value: object) -> None:
    """Numbers come back as numbers of the same float value (Helm writes 1.0 as 1, 2.7e16 in digits)."""

    def numbers_as_floats(data: object) -> object:
        if isinstance(data, dict):
            return {key: numbers_as_floats(item) for key, item in data.items()}
        if isinstance(data, list):
            return [numbers_as_floats(item) for item in data]
        if isinstance(data, int | float) and not isinstance(data, bool):
            return float(data)
        return data

    read = yamlio.loads(goyaml.to_yaml(value) + "\n")
    assert numbers_as_floats(read) == numbers_as_floats(value)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a\n{{ range .Values.a.list }}x{{ end }}", 2, "'range' is outside"),
        ("{{ with .Values.a }}x{{ end }}", 1, "'with' is outside"),
        ('a\nb\n{{ include "x" . }}', 3, "function 'include' is outside"),
        ('{{ define "x" }}y{{ end }}', 1, "function 'define' is outside"),
        ("{{ $x := 1 }}{{ $x = 2 }}", 1, "'=' is outside"),
        ("{{ $y }}", 1, 'undefined variable "$y"'),
        ("{{ if .Values.a.on }}{{ $v := 1 }}{{ end }}\n{{ $v }}", 2, 'undefined variable "$v"'),
        ("{{ toYaml (.Values.a.map }}", 1, "'(' is never closed with ')'"),
        ("{{ .Values.a.b ) }}", 1, "')' without '('"),
        ('{{ eq .Values.a.n "3" }}', 1, "incompatible types for comparison"),
        ("{{ toString .Values.a.map }}", 1, "toString of a map or list is outside"),
        ("{{ .Capabilities.KubeVersion }}", 1, "only .Values, .Release and .Chart"),
        ("{{ .Release.Revision }}", 1, ".Release offers only Name, Namespace, Service"),
        ("{{ . }}", 1, "'.' is outside"),
        ("{{ upper .Values.a.b }}", 1, "function 'upper' is outside"),
        ("x\n{{ if .Values.a.on }}\nno end", 2, "'if' is never closed"),
        ("{{ end }}", 1, "'end' without 'if'"),
        ("{{ if .Values.a.on }}{{ else }}{{ else }}{{ end }}", 1, "'else' without 'if'"),
        ("{{ if .Values.a.on }}{{ else if .Values.a.off }}{{ end }}", 1, "'else if'"),
        ("\n\n{{ .Values.a.b", 3, "never closed"),
        ("{{-.Values.a.b }}", 1, "needs a space after the dash"),
        ("{{ .Values.a.b -}}", 1, ""),
        ("{{ .Values.a.b-}}", 1, "needs a space before the dash"),
        ("{{ }}", 1, "empty action"),
        ("{{ if }}{{ end }}", 1, "'if' needs a condition"),
        ("{{ .Values.a.b | .Values.a.n }}", 1, "only a function can follow"),
        ('{{ "s" "t" }}', 1, "takes no arguments"),
        ("{{ .Values.a.b | nindent }}", 1, "nindent takes 2 argument(s), got 1"),
        ('{{ .Values.a.b | nindent "x" }}', 1, "needs an integer width"),
        ("\n{{ .Values.nope }}", 2, "no value for .Values.nope"),
        (
            "{{ if .Values.nope.deeper }}{{ end }}",
            1,
            "at <.Values.nope.deeper>: nil pointer evaluating interface {}.deeper",
        ),
        ("{{ .Values.a.b.c }}", 1, "at <.Values.a.b.c>: can't evaluate field c in type interface {}"),
        ('{{ index .Values "nope" "x" }}', 1, "error calling index: index of nil pointer"),
        ("{{ index .Values.null 0 }}", 1, "error calling index: index of untyped nil"),
        ("{{ index .Values.a.list 2 }}", 1, "error calling index: index out of range: 2"),
        ('{{ index .Values.a.list "x" }}', 1, "error calling index: cannot index slice/array with type string"),
        ('{{ index .Values.a.n "x" }}', 1, "error calling index: can't index item of type int64"),
        ("{{ .Values.a.n | nindent 2 }}", 1, "wrong type for value; expected string; got int64"),
        ("{{ .Values.a.map }}", 1, ".Values.a.map is a map: print it with toYaml"),
        ("{{ .Values.a.list }}", 1, "is a list: print it with toYaml"),
        ("{{ .Values.gone | toYaml }}", 1, "toYaml of a missing value (.Values.gone)"),
        ('{{ "\\x41" }}', 1, "escape outside the subset"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None,
)
def test_anything_outside_the_subset_is_one_error_naming_the_template_and_line(
    text: str, line: int, message: str
) -> None:
    if not message:
        assert render(text) == "x"
        return
    with pytest.raises(TemplateError) as caught:
        render(text)
    assert caught.value.where == f"templates/t.yaml:{line}"
    assert message in caught.value.message
    assert "\n" not in caught.value.line()
    assert caught.value.exit_code == 2


FRAGMENTS = st.sampled_from(
    [
        "{{",
        "}}",
        "{{- ",
        " -}}",
        "-",
        " ",
        "\n",
        "if ",
        "else",
        "end",
        ".Values.a.b",
        ".Values.a.on",
        ".Values",
        ".Release.Name",
        "|",
        " toYaml",
        " nindent 2",
        " quote",
        '"s"',
        "3",
        "index",
        "range",
        "(",
        ")",
        "$",
        "/*",
        "*/",
        "x",
        ":",
        "not ",
        "or ",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(FRAGMENTS, max_size=30).map("".join))
def test_any_input_renders_or_fails_with_one_error_on_a_line_of_the_template(text: str) -> None:
    try:
        out = render(text)
    except TemplateError as exc:
        name, _, line = str(exc.where).rpartition(":")
        assert name == "templates/t.yaml"
        assert 1 <= int(line) <= text.count("\n") + 1
        assert "\n" not in exc.message
    else:
        assert isinstance(out, str)


@given(st.text(alphabet=st.characters(blacklist_characters="{"), max_size=200))
def test_text_without_actions_renders_to_itself(text: str) -> None:
    assert render(text) == text


@given(
    st.lists(
        st.sampled_from(["a: 1", "b: {{ .Values.a.b }}", "{{- if .Values.a.on }}", "{{- end }}", ""]), max_size=12
    ),
    st.integers(min_value=0, max_value=12),
    st.sampled_from(
        [
            "{{ range .Values.a.list }}",
            '{{ include "x" . }}',
            "{{ $v = 1 }}",
            '{{ lower "A" }}',
            '{{ .Files.Get "x" }}',
            '{{ template "x" }}',
        ]
    ),
)
def test_an_unsupported_action_is_reported_on_its_own_line(lines: list[str], where: int, bad: str) -> None:
    # Balance the ifs so the only fault is the inserted action.
    depth, body = 0, []
    for line in lines:
        if line.endswith("end }}"):
            if depth == 0:
                continue
            depth -= 1
        elif "if" in line:
            depth += 1
        body.append(line)
    body += ["{{- end }}"] * depth
    at = min(where, len(body))
    body.insert(at, bad)
    with pytest.raises(TemplateError) as caught:
        render("\n".join(body))
    assert caught.value.where == f"templates/t.yaml:{at + 1}"


def test_the_manifest_dialect_keeps_false_and_pads_only_non_empty_lines() -> None:
    """upstream AICR's manifest functions: ``default`` replaces only nothing and "" (so a
    ``--set x=false`` stays false), ``nindent`` leaves empty lines empty."""
    parsed = template.parse("{{ .Values.a.off | default true }}|{{ .Values.gap | nindent 2 }}", name="m.yaml")
    context = {**CONTEXT, "Values": {**CONTEXT["Values"], "gap": "a\n\nb"}}
    assert template.render(parsed, context, funcs=template.MANIFEST_FUNCS) == "false|\n  a\n\n  b"
    assert template.render(parsed, context) == "true|\n  a\n  \n  b"


def test_reads_record_the_keys_looked_up_and_the_maps_printed_whole() -> None:
    values = {"sel": {"k": "v"}, "flag": True, "unused": {"x": 1}, "deep": {"a": {"b": 1}}}
    context = {**CONTEXT, "Values": {"c": values}}
    text = '{{- $c := index .Values "c" }}{{ if $c.flag }}{{ toYaml $c.sel }}{{ end }}{{ $c.deep.a.b }}'
    reads = template.Reads()
    template.render(template.parse(text, name="m.yaml"), context, reads=reads)
    assert reads.covers(values, ("sel", "k"))  # printed whole
    assert reads.covers(values, ("flag",))
    assert reads.covers(values, ("deep", "a", "b"))
    assert not reads.covers(values, ("deep", "a", "c"))
    assert not reads.covers(values, ("unused", "x"))
    assert not reads.covers(values, ("spec", "autoTaintNewNodes"))
    indexed = template.Reads()
    template.render(template.parse('{{ index .Values "c" "flag" }}', name="m.yaml"), context, reads=indexed)
    assert indexed.covers(values, ("flag",)) and not indexed.covers(values, ("sel",))
