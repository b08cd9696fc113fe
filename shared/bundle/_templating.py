"""Shared by the deployer modules: the jinja2 environment, its quoting filters, and the file writer.

Templates lay out files; values never go into them as raw text. Every value passes through one of
the filters below, so a value holding quotes, newlines, ``{{ }}``, ``${…}``, ``$(…)``, ``---`` or a
YAML anchor comes out as inert data:

- ``json``: a JSON literal — also a valid YAML flow scalar or collection, and a Go template string;
- ``yaml(indent)``: a block of YAML dumped from data, indented under its key (``{}``/``[]`` inline);
- ``sh``: one shell word (``shlex.quote``);
- ``md``: a Markdown table cell (pipes escaped, newlines folded).

Only deployer modules import this module, so jinja2 loads only when a bundle is written.
"""

from __future__ import annotations

import functools
import json
import logging
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
import jinja2.bccache

from shared import cachedir, errors, files, yamlio
from shared.bundle import hooks, paths

if TYPE_CHECKING:
    from shared.bundle.plan import ComponentPlan

logger = logging.getLogger(__name__)

EXECUTABLE = 0o755
REGULAR = 0o644


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)


def to_yaml_block(value: Any, indent: int) -> str:
    """``value`` as YAML to follow ``key:`` on the same line: an inline empty collection, a scalar,
    or a newline and the block indented by ``indent`` spaces."""
    if isinstance(value, dict | list) and not value:
        return " {}" if isinstance(value, dict) else " []"
    if not isinstance(value, dict | list):
        return " " + to_json(value)
    pad = " " * indent
    text = yamlio.dumps(value).rstrip("\n")
    return "\n" + "\n".join(pad + line if line else line for line in text.split("\n"))


def to_shell(value: Any) -> str:
    return shlex.quote(str(value))


def to_markdown(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ").replace("`", "'")


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            logger.debug("template cache not writable", extra={"cache": self.directory})


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept in the user's cache (keyed by template source): compiling them is a
    fifth of a bundle run. An unwritable cache only costs the compile."""
    folder = cachedir.user_cache("templates")
    try:
        files.program_folder(folder)
    except errors.ToolError:
        return None
    return _BytecodeCache(str(folder))


@functools.cache
def environment(folder: str, *, go_delimiters: bool = False) -> jinja2.Environment:
    """The environment for one deployer's ``templates/`` folder.

    ``go_delimiters`` switches jinja2 to ``[[ ]]``/``[% %]`` so a template can emit Helm's own
    ``{{ }}`` verbatim (the argocd-helm chart templates).
    """
    options: dict[str, Any] = {}
    if go_delimiters:
        options = {
            "variable_start_string": "[[",
            "variable_end_string": "]]",
            "block_start_string": "[%",
            "block_end_string": "%]",
            "comment_start_string": "[#",
            "comment_end_string": "#]",
        }
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_bytecode_cache(),
        **options,
    )
    env.filters.update(json=to_json, yaml=to_yaml_block, sh=to_shell, md=to_markdown)
    return env


def templates_of(module_file: str) -> str:
    return str(Path(module_file).resolve().parent / "templates")


class Writer:
    """Writes a deployer's files below the staging folder and remembers their relative paths."""

    def __init__(self, root: Path, env: jinja2.Environment) -> None:
        self.root = root
        self.env = env
        self.written: list[str] = []

    def text(self, relpath: str, content: str, *, executable: bool = False) -> None:
        target = paths.safe_join(self.root, relpath)
        files.write_staged(target, content, mode=EXECUTABLE if executable else REGULAR)
        self.written.append(paths.safe_relpath(relpath))

    def template(self, relpath: str, template: str, *, executable: bool = False, **context: Any) -> None:
        self.text(relpath, self.env.get_template(template).render(**context), executable=executable)

    def data(self, relpath: str, document: Any) -> None:
        """A YAML file dumped from data (values files, manifests carried as parsed data)."""
        self.text(relpath, yamlio.dumps(document))

    def component_files(self, c: ComponentPlan, *, translate: hooks.Translate = hooks.unchanged) -> None:
        """A component's ``values.yaml`` and ``manifests/`` in its folder, each manifest's Helm
        hooks read by ``translate``. A component without a chart gets its values too when it has
        manifests: they are what its manifests were rendered from, as upstream's bundle shows them."""
        if c.has_chart or (c.manifests and not c.is_kustomize):
            self.data(f"{c.folder}/values.yaml", c.values)
        for manifest in c.manifests:
            self.text(f"{c.folder}/manifests/{manifest.name}", translate(manifest).text)
