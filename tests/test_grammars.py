"""The grammars of chart names, versions, sources, image references, labels, taints and node names.

Properties: every value generated from a grammar's own definition is accepted; the same value with
a forbidden character (shell syntax, space, newline, upper case where the rule is lower case) put
anywhere in it is refused; nothing any pasted-value check accepts, of any text over an alphabet
mixing grammar and shell characters, holds shell syntax or starts like an option; the length
limits hold at their edge. Plus examples from upstream's recipes, malformed values refused,
and the messages naming the value.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import grammars

SHELL = [*"$`;&|<>()'\"\\ \n\t*?!{}", "$(", "${"]
"""Characters no grammar here allows, each shell syntax or a word break."""

_lower_alnum = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=1, max_size=8)
_alnum = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=8)


def _joined(parts: st.SearchStrategy[str], sep: st.SearchStrategy[str], most: int = 4) -> st.SearchStrategy[str]:
    return st.lists(st.tuples(sep, parts), max_size=most).flatmap(
        lambda rest: parts.map(lambda first: first + "".join(s + p for s, p in rest))
    )


chart_names = _joined(_lower_alnum, st.just("-"))
dns_labels = _joined(_lower_alnum, st.sampled_from(["-", "--"])).filter(lambda s: len(s) <= 63)
subdomains = _joined(dns_labels, st.just("."), most=3).filter(lambda s: len(s) <= 253)
numbers = st.integers(min_value=0, max_value=10**6).map(str)
identifiers = st.one_of(numbers, _joined(_alnum, st.just("-")).filter(lambda s: not s.isdigit()))
semvers = st.builds(
    lambda v, core, pre, build: v + ".".join(core) + (f"-{pre}" if pre else "") + (f"+{build}" if build else ""),
    st.sampled_from(["", "v"]),
    st.lists(numbers, min_size=3, max_size=3),
    st.one_of(st.just(""), _joined(identifiers, st.just("."), most=2)),
    st.one_of(st.just(""), _joined(_joined(_alnum, st.just("-")), st.just("."), most=2)),
)
path_components = _joined(_lower_alnum, st.sampled_from([".", "_", "__", "-", "--"]))
hosts = st.one_of(subdomains, st.just("localhost"), st.just("127.0.0.1"))
ports = st.one_of(st.just(""), st.integers(min_value=1, max_value=65535).map(lambda p: f":{p}"))
remote_names = _joined(path_components, st.just("/"), most=3)
tags = st.from_regex(grammars.OCI_TAG_FMT, fullmatch=True)
digests = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64).map(lambda h: f"sha256:{h}")
images = st.builds(
    lambda domain, name, tag, digest: domain + name + tag + digest,
    st.one_of(st.just(""), st.builds(lambda h, p: f"{h}{p}/", hosts.filter(lambda h: "." in h), ports)),
    remote_names,
    st.one_of(st.just(""), tags.map(lambda t: f":{t}")),
    st.one_of(st.just(""), digests.map(lambda d: f"@{d}")),
).filter(lambda s: len(s.split("@")[0].rsplit(":", 1)[0]) <= 255)
url_paths = st.lists(st.text(alphabet=string.ascii_letters + string.digits + "._~+=@:-", max_size=10), max_size=4).map(
    lambda parts: "".join(f"/{p}" for p in parts)
)
http_urls = st.builds(
    lambda s, h, p, path: f"{s}://{h}{p}{path}", st.sampled_from(["http", "https"]), hosts, ports, url_paths
)
oci_sources = st.builds(lambda h, p, n: f"oci://{h}{p}/{n}", hosts, ports, remote_names)
label_names = st.from_regex(grammars.NAME_FMT, fullmatch=True).filter(lambda s: len(s) <= 63)
label_keys = st.builds(
    lambda prefix, name: prefix + name, st.one_of(st.just(""), subdomains.map(lambda s: f"{s}/")), label_names
)
label_values = st.one_of(st.just(""), label_names)


def _spoiled(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A valid value with one forbidden piece put at any position."""
    return st.tuples(valid, st.sampled_from(SHELL), st.integers(min_value=0)).map(
        lambda t: t[0][: t[2] % (len(t[0]) + 1)] + t[1] + t[0][t[2] % (len(t[0]) + 1) :]
    )


@given(chart_names)
def test_helm_chart_names_are_accepted_bare_and_with_a_repository_alias(name: str) -> None:
    assert grammars.chart_name(name) is None
    assert grammars.chart_name(f"nvidia/{name}") is None


@given(_spoiled(chart_names))
def test_a_chart_name_with_a_forbidden_character_is_refused(name: str) -> None:
    assert grammars.chart_name(name) is not None


@given(chart_names.filter(lambda s: any(c.isalpha() for c in s)))
def test_a_chart_name_in_upper_case_is_refused(name: str) -> None:
    assert grammars.chart_name(name.upper()) is not None


@given(semvers)
def test_semver_2_versions_are_chart_versions(version: str) -> None:
    assert grammars.chart_version(version) is None


@given(_spoiled(semvers))
def test_a_version_with_a_forbidden_character_is_refused_even_from_oci(version: str) -> None:
    assert grammars.chart_version(version) is not None
    assert grammars.chart_version(version, oci=True) is not None


@pytest.mark.parametrize("version", ["1.2", "01.2.3", "1.2.3-01", "1.2.3-", "1.2.3+", "latest", "", "V1.2.3"])
def test_versions_outside_semver_2_are_refused(version: str) -> None:
    assert grammars.chart_version(version) is not None


@given(tags)
def test_any_oci_tag_is_a_version_from_an_oci_source(tag: str) -> None:
    assert grammars.chart_version(tag, oci=True) is None


@given(http_urls)
def test_http_urls_are_chart_sources(url: str) -> None:
    assert grammars.chart_source(url) is None
    assert grammars.git_source(url) is None


@given(oci_sources)
def test_oci_repositories_are_chart_sources(source: str) -> None:
    assert grammars.chart_source(source) is None


@given(st.one_of(_spoiled(http_urls), _spoiled(oci_sources)))
def test_a_source_with_shell_syntax_is_refused(source: str) -> None:
    assert grammars.chart_source(source) is not None
    assert grammars.chart_source(source, local=True) is not None
    assert grammars.git_source(source) is not None


@pytest.mark.parametrize(
    "source",
    ["ftp://x.example.com/c", "https://x.example.com/c?x=1", "https://user@x.example.com/c", "https://-x.com/c"],
)
def test_other_schemes_queries_user_info_and_bad_hosts_are_refused(source: str) -> None:
    assert grammars.chart_source(source) is not None


def test_a_local_path_is_a_source_only_where_allowed() -> None:
    assert grammars.chart_source("./charts/gpu-operator") is not None
    assert grammars.chart_source("./charts/gpu-operator", local=True) is None
    assert grammars.git_source("git@github.com:kubeflow/mpi-operator") is None
    assert grammars.chart_source("-rf", local=True) is not None


@given(images)
def test_distribution_references_are_images(image: str) -> None:
    assert grammars.image_reference(image) is None


@given(_spoiled(images))
def test_an_image_with_a_forbidden_character_is_refused(image: str) -> None:
    assert grammars.image_reference(image) is not None


@pytest.mark.parametrize(
    "image",
    [
        "ubuntu",
        "pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime",
        "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830",
        "localhost:5000/a/b",
        "ghcr.io/nvidia/aicr-validators/conformance:latest",
    ],
)
def test_upstream_images_are_accepted(image: str) -> None:
    assert grammars.image_reference(image) is None


@pytest.mark.parametrize("image", ["Ubuntu", "a//b", "a:", "a@sha256:abc", ":tag", "a/-b", "a" * 256])
def test_malformed_images_are_refused(image: str) -> None:
    assert grammars.image_reference(image) is not None


@given(label_keys, label_values)
def test_qualified_names_and_label_values_are_accepted(key: str, value: str) -> None:
    assert grammars.label_key(key) is None and grammars.taint_key(key) is None
    assert grammars.label_value(value) is None and grammars.taint_value(value) is None


@given(_spoiled(label_keys), _spoiled(label_names))
def test_a_label_key_or_value_with_a_forbidden_character_is_refused(key: str, value: str) -> None:
    assert grammars.label_key(key) is not None
    assert grammars.label_value(value) is not None


def test_the_label_limits_hold_at_their_edge() -> None:
    assert grammars.label_value("a" * 63) is None
    assert "no more than 63" in (grammars.label_value("a" * 64) or "")
    assert grammars.label_key("a" * 63) is None and grammars.label_key("a" * 64) is not None
    assert grammars.label_key(f"{'a' * 253}/x") is None and grammars.label_key(f"{'a' * 254}/x") is not None
    assert grammars.label_key("a/b/c") is not None and grammars.label_key("/x") is not None


@given(subdomains)
def test_dns_subdomains_are_node_names(name: str) -> None:
    assert grammars.node_name(name) is None


@given(st.one_of(_spoiled(subdomains), subdomains.map(str.upper).filter(lambda s: s != s.lower())))
def test_a_node_name_with_a_forbidden_character_or_upper_case_is_refused(name: str) -> None:
    assert grammars.node_name(name) is not None


@pytest.mark.parametrize("name", ["", "../../x", "node_1", "-node", "node.", "a" * 254, "node-1\n"])
def test_names_that_are_no_node_names_are_refused(name: str) -> None:
    assert grammars.node_name(name) is not None


@given(st.text(max_size=20))
def test_only_the_three_taint_effects_are_effects(effect: str) -> None:
    assert (grammars.taint_effect(effect) is None) == (effect in ("NoSchedule", "PreferNoSchedule", "NoExecute"))


def test_messages_name_the_value_and_the_rule() -> None:
    assert (
        grammars.chart_version("1.0;x")
        == "invalid chart version '1.0;x': must be a SemVer 2 version (e.g. '1.2.3' or 'v25.10.1')"
    )
    assert (grammars.chart_name("A") or "").startswith("invalid chart name 'A': Helm chart names are lower case")
    assert (grammars.node_name("../x") or "").startswith("invalid node name '../x': a lowercase RFC 1123 subdomain")


PASTED = {
    "chart_name": grammars.chart_name,
    "chart_version": lambda t: grammars.chart_version(t, oci=True),
    "chart_source": lambda t: grammars.chart_source(t, local=True),
    "git_source": grammars.git_source,
    "repository_path": grammars.repository_path,
    "git_ref": grammars.git_ref,
    "image_reference": grammars.image_reference,
}
"""Every check whose values a generated script or manifest receives."""


@pytest.mark.parametrize("check", PASTED.values(), ids=PASTED.keys())
@given(text=st.text(alphabet="ab1.-_/:@+=~%" + "".join(SHELL[:-2]), max_size=24))
def test_nothing_a_pasted_value_check_accepts_holds_shell_syntax(check, text: str) -> None:  # type: ignore[no-untyped-def]
    if check(text) is None:
        assert not any(c in text for c in SHELL), text
        assert not text.startswith(("-", "~")), text


@given(dns_labels)
def test_dns_labels_are_release_names_and_namespaces(name: str) -> None:
    assert grammars.dns_label(name) is None


@given(
    st.one_of(_spoiled(dns_labels), dns_labels.map(lambda s: s + ".x"), dns_labels.map(str.upper).filter(str.isupper))
)
def test_a_dns_label_with_a_forbidden_character_a_dot_or_upper_case_is_refused(name: str) -> None:
    assert grammars.dns_label(name) is not None


def test_a_dns_label_is_at_most_63_characters() -> None:
    assert grammars.dns_label("a" * 63) is None and grammars.dns_label("a" * 64) is not None
