"""Building an API client the way kubectl finds its cluster.

Order: an explicit ``--kubeconfig`` (with ``--context``), else ``$KUBECONFIG`` (a list of files,
merged as kubectl merges them), else ``~/.kube/config``, else the in-cluster service account
(``KUBERNETES_SERVICE_HOST`` and the mounted token). Every failure is one ``InvalidInput`` or
``NotFound`` naming the file or context; credentials never appear in a message.

``KUBECONFIG`` is read when a client is built, not when the module is imported (the kubernetes
package freezes it at import, which would surprise tests and long-running programs). A
long-running controller whose token was rotated (a projected ServiceAccount token, a renewed
kubeconfig) reads it again with ``reload_credentials`` when the server refuses the old one.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from shared import errors, files, logs, yamlio
from shared.kube.api import KubeApi

ENV_KUBECONFIG = "KUBECONFIG"
ENV_SERVICE_HOST = "KUBERNETES_SERVICE_HOST"
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEFAULT_NAMESPACE = "default"
"""Where kubectl looks when neither ``-n`` nor the context names a namespace."""


class ClosableKubeApi(KubeApi, Protocol):
    """A client this module built and its owner closes: the official ``ApiClient`` has ``close``."""

    def close(self) -> None:
        """Release the client's thread pool (its HTTP pool is cleared by ``close`` below)."""
        ...


@dataclass(frozen=True)
class Source:
    """Where a client's configuration came from, for messages (never holds a credential)."""

    kind: str  # "kubeconfig" or "in-cluster"
    paths: tuple[Path, ...] = ()
    context: str | None = None

    def describe(self) -> str:
        if self.kind == "in-cluster":
            return "in-cluster service account"
        where = os.pathsep.join(str(p) for p in self.paths)
        return f"{where} (context {self.context})" if self.context else where


def find_source(
    *,
    kubeconfig: Path | None = None,
    context: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    service_account_dir: Path = SERVICE_ACCOUNT_DIR,
) -> Source:
    """Decide where the configuration comes from, without reading credentials yet."""
    env = os.environ if environ is None else environ
    if kubeconfig is not None:
        if kubeconfig.is_dir() or (kubeconfig.is_symlink() and not kubeconfig.exists()):
            files.read_bytes(kubeconfig)  # refuses it, saying why (a directory, a symlink loop)
        if not kubeconfig.is_file():
            raise errors.InvalidInput("kubeconfig file does not exist", where=str(kubeconfig))
        return Source("kubeconfig", (kubeconfig,), context)
    listed = [Path(p) for p in env.get(ENV_KUBECONFIG, "").split(os.pathsep) if p]
    present = tuple(p for p in listed if p.is_file())
    if listed and not present:
        raise errors.InvalidInput("no file named by KUBECONFIG exists", where=env.get(ENV_KUBECONFIG, ""))
    if present:
        return Source("kubeconfig", present, context)
    default = (home or Path(env.get("HOME", "~")).expanduser()) / ".kube" / "config"
    if default.is_file():
        return Source("kubeconfig", (default,), context)
    if env.get(ENV_SERVICE_HOST) and (service_account_dir / "token").is_file():
        if context:
            raise errors.InvalidInput("--context needs a kubeconfig; none was found (running in-cluster)")
        return Source("in-cluster")
    raise errors.InvalidInput(
        "no cluster configuration: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run inside a cluster"
    )


def context_namespace(
    *,
    kubeconfig: Path | None = None,
    context: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    service_account_dir: Path = SERVICE_ACCOUNT_DIR,
) -> str:
    """The namespace kubectl uses when ``-n`` is not given: the context's (``kubectl config
    set-context --current --namespace=X``), in-cluster the pod's own, else ``default``.

    Raises as ``new_client`` does: InvalidInput without a configuration, NotFound for an unknown
    context."""
    source = find_source(
        kubeconfig=kubeconfig, context=context, environ=environ, home=home, service_account_dir=service_account_dir
    )
    if source.kind == "in-cluster":
        own = service_account_dir / "namespace"
        return (files.read_text(own).strip() if own.is_file() else "") or DEFAULT_NAMESPACE
    from kubernetes import config
    from kubernetes.config.config_exception import ConfigException

    try:
        contexts, active = config.list_kube_config_contexts(config_file=os.pathsep.join(str(p) for p in source.paths))
    except ConfigException as exc:
        raise errors.InvalidInput(
            logs.redact(str(exc)).strip() or "invalid kubeconfig", where=source.describe()
        ) from exc
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise errors.InvalidInput(f"unusable kubeconfig: {type(exc).__name__}", where=source.describe()) from exc
    if context is not None:
        chosen = next((c for c in contexts or [] if c.get("name") == context), None)
        if chosen is None:
            raise errors.NotFound(f"context {context!r} not found", where=source.describe())
    else:
        chosen = active
    return str(((chosen or {}).get("context") or {}).get("namespace") or DEFAULT_NAMESPACE)


def new_client(
    *,
    kubeconfig: Path | None = None,
    context: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    service_account_dir: Path = SERVICE_ACCOUNT_DIR,
    connections: int = 0,
    connect_retries: int = 2,
) -> ClosableKubeApi:
    """A ``kubernetes.client.ApiClient`` for the chosen cluster; the caller closes it (``close``).

    ``connections``: how many requests the caller may have in flight at once (its worker threads);
    the HTTP pool keeps at least that many connections (the default, 5 per CPU, would discard the
    rest with urllib3's "Connection pool is full" warning)."""
    from kubernetes import client
    from urllib3 import Retry

    source = find_source(
        kubeconfig=kubeconfig, context=context, environ=environ, home=home, service_account_dir=service_account_dir
    )

    def configure() -> Any:
        return _configuration(source, context=context, environ=environ, service_account_dir=service_account_dir)

    configuration = configure()
    # Only connection set-up is retried below us; statuses (409/429/5xx) and broken reads are
    # left to shared.kube.retry, so there is one visible retry policy, not two stacked ones.
    configuration.retries = Retry(
        total=connect_retries,
        connect=connect_retries,
        read=0,
        status=0,
        other=0,
        redirect=0,
        respect_retry_after_header=False,
    )
    configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize, connections)
    api: ClosableKubeApi = client.ApiClient(configuration)
    _RELOADERS[api] = configure
    return api


def _configuration(
    source: Source, *, context: str | None, environ: Mapping[str, str] | None, service_account_dir: Path
) -> Any:
    """A client Configuration read from ``source`` now (files and token as they are at this moment)."""
    import yaml
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    try:
        if source.kind == "in-cluster":
            from kubernetes.config.incluster_config import InClusterConfigLoader

            env = os.environ if environ is None else environ
            InClusterConfigLoader(
                token_filename=str(service_account_dir / "token"),
                cert_filename=str(service_account_dir / "ca.crt"),
                environ=dict(env),
            ).load_and_set(configuration)
        else:
            for path in source.paths:
                _checked(path)
            config.load_kube_config(
                config_file=os.pathsep.join(str(p) for p in source.paths),
                context=context,
                client_configuration=configuration,
                persist_config=False,
            )
    except ConfigException as exc:
        message = logs.redact(str(exc)).strip() or "invalid cluster configuration"
        if context and "context" in message.lower():
            raise errors.NotFound(f"context {context!r} not found", where=source.describe()) from exc
        raise errors.InvalidInput(message, where=source.describe()) from exc
    except yaml.YAMLError as exc:  # the client's own YAML reader may refuse what ours took (b":")
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise errors.InvalidInput(f"not valid YAML: {problem}", where=source.describe()) from exc
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise errors.InvalidInput(
            f"unusable cluster configuration: {type(exc).__name__}", where=source.describe()
        ) from exc
    return configuration


_CHECKED: dict[tuple[str, int, int], None] = {}
"""Kubeconfig files (path, size, mtime) the input layer has passed, so a reload does not parse again."""


def _checked(path: Path) -> None:
    """The input layer first: the client's own loader reads any size, aliases and nesting included,
    and fails on binary or broken YAML with what is not ours to map. Once per version of the file."""
    try:
        status = path.stat()
        key = (str(path), status.st_size, status.st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _CHECKED:
        return
    yamlio.load_file(path)
    if key is not None:
        _CHECKED[key] = None


_RELOADERS: weakref.WeakKeyDictionary[Any, Callable[[], Any]] = weakref.WeakKeyDictionary()
"""How each client this module built reads its configuration again."""
_CREDENTIALS = ("api_key", "api_key_prefix", "username", "password", "refresh_api_key_hook")
"""What a rotation changes; the server, its CA and the client certificate stay as built."""


def reload_credentials(api: KubeApi) -> bool:
    """Read the client's kubeconfig (or service account token) again and use its credentials from
    the next request on; False when ``api`` was not built here or the configuration is unreadable now."""
    try:
        reload = _RELOADERS.get(api)
    except TypeError:  # not weakly referenceable: certainly not one of ours
        return False
    configuration = getattr(api, "configuration", None)
    if reload is None or configuration is None:
        return False
    try:
        fresh = reload()
    except errors.ToolError:
        return False
    for name in _CREDENTIALS:
        setattr(configuration, name, getattr(fresh, name, None))
    return True


def close(api: ClosableKubeApi) -> None:
    """Close an ApiClient and its connections (``ApiClient.close`` leaves the HTTP pool open, whose
    sockets then linger until garbage collection)."""
    api.close()
    pool = getattr(getattr(api, "rest_client", None), "pool_manager", None)
    if pool is not None:
        pool.clear()


class LazyClient:
    """An ApiClient built on first use and closed with the ``with`` block that owns it.

    Commands that may or may not need the cluster (a ``cm://`` input, a live snapshot) pass this as
    the factory, so an offline run never loads the kubernetes package and no connection is left open.
    """

    def __init__(self, *, kubeconfig: Path | None = None, context: str | None = None, connections: int = 0) -> None:
        self.kubeconfig = kubeconfig
        self.context = context
        self.connections = connections
        self._client: ClosableKubeApi | None = None

    def __call__(self) -> KubeApi:
        if self._client is None:
            self._client = new_client(kubeconfig=self.kubeconfig, context=self.context, connections=self.connections)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            close(self._client)
            self._client = None

    def __enter__(self) -> LazyClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
