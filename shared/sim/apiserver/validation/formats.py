"""String formats and their refusal texts, as apimachinery's ``pkg/util/validation`` words them.

Every function returns the list of problems with a value (empty when it is fine), each one the
exact sentence the real server puts after ``Invalid value: "x": `` — callers turn them into
field errors. Sources: ``apimachinery:pkg/util/validation/validation.go`` (DNS names, ports,
percentages, config keys), ``pkg/api/validate/content`` (label keys and values) and
``pkg/api/validation/path/name.go`` (path segment names).
"""

from __future__ import annotations

import re

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_PERCENT_FMT = "[0-9]+%"

_LABEL = re.compile(rf"^{_LABEL_FMT}\Z")
_SUBDOMAIN = re.compile(rf"^{_SUBDOMAIN_FMT}\Z")
_DNS1035 = re.compile(rf"^{_DNS1035_FMT}\Z")
_QNAME = re.compile(rf"^{_QNAME_FMT}\Z")
_LABEL_VALUE = re.compile(rf"^{_LABEL_VALUE_FMT}\Z")
_CONFIG_KEY = re.compile(rf"^{_CONFIG_KEY_FMT}\Z")
_PERCENT = re.compile(rf"^{_PERCENT_FMT}\Z")
_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+\Z")
_ONE_LETTER = re.compile("[a-z]")

_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'"


def regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's ``RegexError``: the message, examples, then the pattern."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def inclusive_range_error(low: int, high: int) -> str:
    return f"must be between {low} and {high}, inclusive"


def dns1123_label(value: str) -> list[str]:
    errors = []
    if len(value) > DNS1123_LABEL_MAX:
        errors.append(max_len_error(DNS1123_LABEL_MAX))
    if not _LABEL.match(value):
        if _SUBDOMAIN.match(value):
            errors.append("must not contain dots")
        else:
            errors.append(regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errors


def dns1123_subdomain(value: str) -> list[str]:
    errors = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errors.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _SUBDOMAIN.match(value):
        errors.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errors


def dns1035_label(value: str) -> list[str]:
    errors = []
    if len(value) > DNS1123_LABEL_MAX:
        errors.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1035.match(value):
        errors.append(regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errors


def qualified_name(value: str) -> list[str]:
    """A label key, annotation key, finalizer or resource name: ``[prefix/]name``."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend(f"prefix part {m}" for m in dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        errors.append(f"name part {max_len_error(QUALIFIED_NAME_MAX)}")
    if not _QNAME.match(name):
        errors.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errors


def label_value(value: str) -> list[str]:
    errors = []
    if len(value) > LABEL_VALUE_MAX:
        errors.append(max_len_error(LABEL_VALUE_MAX))
    if not _LABEL_VALUE.match(value):
        errors.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errors


def config_map_key(value: str) -> list[str]:
    """A ConfigMap or Secret data key."""
    errors = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errors.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _CONFIG_KEY.match(value):
        errors.append(regex_error(_CONFIG_KEY_MSG, _CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    if value == ".":
        errors.append("must not be '.'")
    elif value == "..":
        errors.append("must not be '..'")
    elif value.startswith(".."):
        errors.append("must not start with '..'")
    return errors


def port_number(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def port_name(port: str) -> list[str]:
    """An IANA service name: at most 15 of ``[-a-z0-9]``, one letter, no ``--``, no edge hyphen."""
    errors = []
    if len(port) > 15:
        errors.append(max_len_error(15))
    if not _PORT_NAME_CHARS.match(port):
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _ONE_LETTER.search(port):
        errors.append("must contain at least one letter (a-z)")
    if "--" in port:
        errors.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errors.append("must not begin or end with a hyphen")
    return errors


def percent(value: str) -> list[str]:
    return [] if _PERCENT.match(value) else [regex_error(_PERCENT_MSG, _PERCENT_FMT, "1%", "93%")]


def _mask_trailing_dash(name: str) -> str:
    # Upstream's maskTrailingDash drops two characters, not one (name[:len(name)-2] + "a").
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    return dns1035_label(_mask_trailing_dash(name) if prefix else name)


def path_segment_name(name: str, prefix: bool) -> list[str]:
    """RBAC object names: anything that can sit in a URL path segment."""
    if not prefix:
        for illegal in (".", ".."):
            if name == illegal:
                return [f"may not be '{illegal}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]
