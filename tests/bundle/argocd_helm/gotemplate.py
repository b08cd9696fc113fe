"""A test-only renderer for exactly the Helm template constructs our argocd-helm templates use.

It stands in for ``helm template`` (not installed here) so the rendered Applications can be
checked against the Argo CD schema: ``index .Values.components "<name>"``, ``if $c.enabled``,
``<expr> | quote`` and ``toYaml <expr> | nindent N``. Anything else left over fails the test.
"""

from __future__ import annotations

import json
import re
from typing import Any

from shared import yamlio

_BIND = re.compile(
    r'^\{\{- \$c := index \.Values\.components ("[^"]+") \}\}\n\{\{- if \$c\.enabled \}\}\n'
    r"(?P<body>.*)\{\{- end \}\}\n$",
    re.S,
)


def _lookup(expr: str, values: dict[str, Any], component: dict[str, Any]) -> Any:
    root, path = (component, expr[3:]) if expr.startswith("$c.") else (values, expr.removeprefix(".Values."))
    for part in path.split("."):
        root = root[part]
    return root


def render(template: str, values: dict[str, Any]) -> str:
    match = _BIND.match(template)
    assert match, template[:200]
    component = values["components"][json.loads(match.group(1))]
    if not component["enabled"]:
        return ""
    body = match.group("body")

    def yaml_block(m: re.Match[str]) -> str:
        pad = " " * int(m.group(2))
        text = yamlio.dumps(_lookup(m.group(1), values, component)).rstrip("\n")
        return "\n" + "\n".join(pad + line for line in text.split("\n"))

    body = re.sub(r"\s*\{\{- toYaml (\S+) \| nindent (\d+) \}\}", yaml_block, body)
    body = re.sub(r"\{\{ (\S+) \| quote \}\}", lambda m: json.dumps(str(_lookup(m.group(1), values, component))), body)
    assert "{{" not in body, body
    return body
