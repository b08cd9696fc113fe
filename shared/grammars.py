"""The grammars of the names and references the programs take and later hand to other tools.

A chart name, version or source, an image reference, a label key or value, a taint, a node name:
each is checked here against the rule of the program that finally consumes it (Helm, the OCI
distribution spec, the Kubernetes API server), so a value that would fail there, or that would
carry shell syntax into a generated script, is refused where it is read, with one line naming it.

Each check takes the text and returns what is wrong with it, or None. Every pattern is matched
with ``fullmatch``: Python's ``$`` also matches before a final newline, which would let ``"a\\n"``
through. A leaf module (``re`` only) so every layer can use it; ``shared.kube.labelselector`` and
``shared.health.valuecheck`` take their label rules from here, so there is one set of them.
"""

from __future__ import annotations

import re

# ---------------------------------------------------------------- Kubernetes names and labels
# apimachinery pkg/util/validation/validation.go (IsQualifiedName, IsValidLabelValue,
# IsDNS1123Subdomain, IsDNS1123Label), with the messages Kubernetes 1.34 prints.

NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
VALUE_FMT = f"({NAME_FMT})?"
LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
SUBDOMAIN_FMT = LABEL_FMT + "(\\." + LABEL_FMT + ")*"
_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_NAME, _VALUE, _SUBDOMAIN, _LABEL = (re.compile(f) for f in (NAME_FMT, VALUE_FMT, SUBDOMAIN_FMT, LABEL_FMT))

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's ``RegexError`` text: the rule, examples and the pattern."""
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def label_key_problems(key: str) -> list[str]:
    """``IsQualifiedName``: what is wrong with a label (or taint, annotation) key; empty when nothing is."""
    parts = key.split("/")
    if len(parts) > 2:
        return [
            f"a qualified name {regex_error(_NAME_MSG, NAME_FMT, 'MyName', 'my.name', '123-abc')}"
            " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    problems = _prefix_problems(parts[0]) if len(parts) == 2 else []
    name = parts[-1]
    if not name:
        problems.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        problems.append("name part must be no more than 63 characters")
    if not _NAME.fullmatch(name):
        problems.append("name part " + regex_error(_NAME_MSG, NAME_FMT, "MyName", "my.name", "123-abc"))
    return problems


def _prefix_problems(prefix: str) -> list[str]:
    if not prefix:
        return ["prefix part must be non-empty"]
    problems = ["prefix part must be no more than 253 characters"] if len(prefix.encode()) > 253 else []
    if not _SUBDOMAIN.fullmatch(prefix):
        problems.append("prefix part " + regex_error(_SUBDOMAIN_MSG, SUBDOMAIN_FMT, "example.com"))
    return problems


def label_value_problems(value: str) -> list[str]:
    """``IsValidLabelValue``: what is wrong with a label (or taint) value; empty when nothing is."""
    problems = ["must be no more than 63 characters"] if len(value.encode()) > 63 else []
    if not _VALUE.fullmatch(value):
        problems.append(regex_error(_VALUE_MSG, VALUE_FMT, "MyValue", "my_value", "12345"))
    return problems


def label_key(text: str) -> str | None:
    problems = label_key_problems(text)
    return f"invalid label key {text!r}: {'; '.join(problems)}" if problems else None


def label_value(text: str) -> str | None:
    problems = label_value_problems(text)
    return f"invalid label value {text!r}: {'; '.join(problems)}" if problems else None


def taint_key(text: str) -> str | None:
    problems = label_key_problems(text)
    return f"invalid taint key {text!r}: {'; '.join(problems)}" if problems else None


def taint_value(text: str) -> str | None:
    problems = label_value_problems(text)
    return f"invalid taint value {text!r}: {'; '.join(problems)}" if problems else None


def taint_effect(text: str) -> str | None:
    if text in TAINT_EFFECTS:
        return None
    return f"invalid taint effect {text!r}: must be one of {', '.join(TAINT_EFFECTS)}"


def dns_subdomain_problems(text: str) -> list[str]:
    """``IsDNS1123Subdomain``: node names and most object names."""
    problems = ["must be no more than 253 characters"] if len(text) > 253 else []
    if not _SUBDOMAIN.fullmatch(text):
        problems.append(regex_error(_SUBDOMAIN_MSG, SUBDOMAIN_FMT, "example.com"))
    return problems


def node_name(text: str) -> str | None:
    """A node's name is a DNS-1123 subdomain (so never empty, never ``../x``)."""
    problems = dns_subdomain_problems(text)
    return f"invalid node name {text!r}: {'; '.join(problems)}" if problems else None


def dns_label(text: str) -> str | None:
    """``IsDNS1123Label``: namespaces, Helm release names."""
    if len(text) <= 63 and _LABEL.fullmatch(text):
        return None
    return (
        f"{text!r} is not a DNS-1123 label "
        "(at most 63 lower case letters, digits or '-', starting and ending with a letter or digit)"
    )


# ---------------------------------------------------------------- Helm charts
# Chart names: Helm's chart best practices (helm.sh/docs/chart_best_practices/conventions: "Chart
# names must be lower case letters and numbers. Words may be separated with dashes"). A recipe may
# write the chart as `repo/chart`, after the repository alias `helm repo add` registered.
_CHART = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_REPO_ALIAS = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")

# Chart versions: SemVer 2 (https://semver.org/spec/v2.0.0.html, its BNF), which Helm requires
# of a chart's version; Helm (Masterminds/semver) also reads a leading `v`, as upstream's recipes
# write (`v25.10.1`).
_NUM = r"(0|[1-9][0-9]*)"
_PRE_ID = r"(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_BUILD_ID = r"[0-9A-Za-z-]+"
SEMVER_FMT = rf"v?{_NUM}\.{_NUM}\.{_NUM}(-{_PRE_ID}(\.{_PRE_ID})*)?(\+{_BUILD_ID}(\.{_BUILD_ID})*)?"
_SEMVER = re.compile(SEMVER_FMT)

# OCI distribution spec (opencontainers/distribution-spec, "Pulling manifests"): a tag.
OCI_TAG_FMT = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}"
_OCI_TAG = re.compile(OCI_TAG_FMT)


def chart_name(text: str) -> str | None:
    alias, slash, name = text.rpartition("/")
    if slash and not _REPO_ALIAS.fullmatch(alias):
        return f"invalid chart repository alias {alias!r} in {text!r}: letters, digits, '.', '_' or '-'"
    if _CHART.fullmatch(name) and len(name) <= 250:
        return None
    return f"invalid chart name {text!r}: Helm chart names are lower case letters, digits and '-' (e.g. 'gpu-operator')"


def chart_version(text: str, *, oci: bool = False) -> str | None:
    """SemVer 2 (``1.2.3``, ``v25.10.1``, ``0.1.0-alpha.8``); from an ``oci://`` source also any OCI tag."""
    if _SEMVER.fullmatch(text) or (oci and _OCI_TAG.fullmatch(text)):
        return None
    rule = "a SemVer 2 version or an OCI tag" if oci else "a SemVer 2 version (e.g. '1.2.3' or 'v25.10.1')"
    return f"invalid chart version {text!r}: must be {rule}"


# ---------------------------------------------------------------- sources
# URLs as chart repositories and git hosts spell them (RFC 3986), narrowed to the characters such
# URLs use: a host name, IPv4 or [IPv6] address, an optional port, and a path of unreserved
# characters, percent escapes and '/', '@', ':', '+', '='. No query, fragment or user info, and
# none of RFC 3986's other sub-delimiters ('$', '&', ';', '(', ')', '!', '*', ',', "'"), which are
# also shell syntax.
_HOST = r"([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])"
_PORT = r"(:[0-9]{1,5})?"
_URL_PATH = r"(/([A-Za-z0-9._~+=@:-]|%[0-9A-Fa-f]{2})*)*"
_HTTP_URL = re.compile(rf"https?://{_HOST}{_PORT}{_URL_PATH}")
_GIT_URL = re.compile(rf"(https?|ssh|git)://([A-Za-z0-9._-]+@)?{_HOST}{_PORT}{_URL_PATH}")
_SCP_URL = re.compile(rf"[A-Za-z0-9._-]+@{_HOST}:([A-Za-z0-9._~+=@-][A-Za-z0-9._~+=@/-]*)?")
# A local path: relative or absolute, of letters, digits and '.', '_', '-', '/', '+', '@', '~'
# not first (no tilde expansion), and no argument-like leading '-'.
_LOCAL_PATH = re.compile(r"[A-Za-z0-9._/+@][A-Za-z0-9._/+@~-]*")

# The distribution reference grammar (distribution/reference regexp.go):
#   reference := name [ ":" tag ] [ "@" digest ]
#   name      := [domain "/"] remote-name,  remote-name := path-component ("/" path-component)*
_PATH_COMPONENT = r"[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])"
_DOMAIN = rf"({_DOMAIN_COMPONENT}(\.{_DOMAIN_COMPONENT})*|\[[0-9A-Fa-f:]+\])(:[0-9]+)?"
_REMOTE_NAME = rf"{_PATH_COMPONENT}(/{_PATH_COMPONENT})*"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}"
IMAGE_FMT = rf"(?P<name>({_DOMAIN}/)?{_REMOTE_NAME})(:{OCI_TAG_FMT})?(@{_DIGEST})?"
_IMAGE = re.compile(IMAGE_FMT)
_OCI_REPOSITORY = re.compile(rf"oci://{_DOMAIN}(/{_REMOTE_NAME})?/?")
_NAME_TOTAL_MAX = 255


def chart_source(text: str, *, local: bool = False) -> str | None:
    """A chart repository: an ``http(s)://`` URL or an ``oci://`` repository; a local path if ``local``."""
    if text.startswith("oci://"):
        if _OCI_REPOSITORY.fullmatch(text):
            return None
        return (
            f"invalid chart source {text!r}: an oci:// reference is a registry host[:port] and a path "
            "of lower case letters, digits and '.', '_' or '-' (e.g. 'oci://ghcr.io/nvidia')"
        )
    if _HTTP_URL.fullmatch(text) or (local and _LOCAL_PATH.fullmatch(text)):
        return None
    also = " or a local path" if local else ""
    return (
        f"invalid chart source {text!r}: must be an http(s):// URL{also} or an oci:// reference, of letters, "
        "digits and '.', '_', '~', '-', '/', ':', '@', '+', '=' or %-escapes (no query or shell characters)"
    )


def git_source(text: str) -> str | None:
    """A Kustomize source: an http(s)/ssh/git URL, ``user@host:path`` or a local path."""
    if _GIT_URL.fullmatch(text) or _SCP_URL.fullmatch(text) or _LOCAL_PATH.fullmatch(text):
        return None
    return (
        f"invalid source {text!r}: must be an http(s), ssh or git URL, user@host:path or a local path, of "
        "letters, digits and '.', '_', '~', '-', '/', ':', '@', '+', '=' (no query or shell characters)"
    )


def git_repository(text: str) -> str | None:
    """A remote git repository (Argo CD's ``repoURL``): an http(s)/ssh/git URL or ``user@host:path``."""
    if _GIT_URL.fullmatch(text) or _SCP_URL.fullmatch(text):
        return None
    return (
        f"invalid repository URL {text!r}: must be an http(s), ssh or git URL or user@host:path, of letters, "
        "digits and '.', '_', '~', '-', '/', ':', '@', '+', '=' (no query or shell characters)"
    )


def repository_path(text: str) -> str | None:
    """A folder inside a repository (a Kustomize ``path``)."""
    if _LOCAL_PATH.fullmatch(text):
        return None
    return f"invalid path {text!r}: letters, digits and '.', '_', '-', '/', '+', '@', '~' (not first)"


# git check-ref-format, narrowed to the characters refs use in practice: no '..', no '@{', no
# leading '-' or '.', no trailing '/', '.' or '.lock', no control or shell characters.
_GIT_REF = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9._/+-]*")


def git_ref(text: str) -> str | None:
    if (
        _GIT_REF.fullmatch(text)
        and ".." not in text
        and "//" not in text
        and not text.endswith(("/", ".", ".lock"))
        and "/." not in text
    ):
        return None
    return f"invalid git ref {text!r}: a tag, branch or commit of letters, digits and '.', '_', '-', '/', '+'"


def component_problems(
    *, kustomize: bool, chart: str | None, source: str | None, version: str | None, path: str | None, tag: str | None
) -> list[tuple[str, str]]:
    """(field, problem) for each set field of a recipe component that leaves its grammar: a Helm
    component's chart, source and version, or a Kustomize component's source, path and tag."""
    if kustomize:
        checks = [("source", source, git_source), ("path", path, repository_path), ("tag", tag, git_ref)]
    else:
        oci = (source or "").startswith("oci://")
        checks = [
            ("chart", chart, chart_name),
            ("source", source, chart_source),
            ("version", version, lambda text: chart_version(text, oci=oci)),
        ]
    found = [(field, check(value)) for field, value, check in checks if value]
    return [(field, problem) for field, problem in found if problem is not None]


def image_reference(text: str) -> str | None:
    """A container image: ``[registry[:port]/]path[:tag][@digest]``, the name at most 255 characters."""
    match = _IMAGE.fullmatch(text)
    if match and len(match.group("name")) <= _NAME_TOTAL_MAX:
        return None
    return (
        f"invalid image reference {text!r}: must be [registry[:port]/]path[:tag][@digest] with a lower case "
        "path (e.g. 'nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04')"
    )
