"""Cluster credentials as kubectl finds them: a kubeconfig list (KUBECONFIG=a:b), else the in-cluster account.

kubectl merges a KUBECONFIG list so that the first file to set a value wins: clusters, users and contexts by name,
and current-context too. The Kubernetes client's own `KubeConfigMerger` (used by `new_client_from_config` when the
path holds os.pathsep) merges the named entries that way, but lets the LAST file's current-context win. So the
current context is picked here, from the first file that sets it, and passed to the client explicitly.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from bot.config import ConfigError, Settings


def kubeconfig_paths(settings: Settings) -> tuple[list[Path], bool]:
    """The kubeconfig files to merge, in order, and whether the user named them (a setting or KUBECONFIG).

    A list (os.pathsep-separated) is accepted in TRIAGEBOT_KUBECONFIG, --kubeconfig and KUBECONFIG; files that do
    not exist are skipped, as kubectl skips them."""
    named = str(settings.kubeconfig) if settings.kubeconfig is not None else os.environ.get("KUBECONFIG", "")
    listed = [Path(p).expanduser() for p in named.split(os.pathsep) if p]
    if not listed:
        return [p for p in [Path.home() / ".kube" / "config"] if p.is_file()], False
    return [p for p in listed if p.is_file()], settings.kubeconfig is not None


def first_current_context(paths: list[Path]) -> str | None:
    """current-context of the first file that sets one (kubectl's rule)."""
    for path in paths:
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
            raise ConfigError(f"kubeconfig {path}: unreadable: {str(err).splitlines()[0]}") from None
        current = doc.get("current-context") if isinstance(doc, dict) else None
        if isinstance(current, str) and current:
            return current
    return None


def kube_client(settings: Settings) -> Any:
    """An ApiClient from the merged kubeconfig files (and context), else the in-cluster service account."""
    from kubernetes import client, config

    paths, named = kubeconfig_paths(settings)
    try:
        if paths:
            context = settings.context or first_current_context(paths)
            return config.new_client_from_config(config_file=os.pathsep.join(str(p) for p in paths),
                                                 context=context, persist_config=False)
        if named:
            raise ConfigError(f"setting kubeconfig (TRIAGEBOT_KUBECONFIG): no such file {settings.kubeconfig}")
        config.load_incluster_config()
        return client.ApiClient()
    except config.ConfigException as err:
        raise ConfigError(f"no usable cluster credentials: {str(err).splitlines()[0]} "
                          f"(set TRIAGEBOT_KUBECONFIG and TRIAGEBOT_CONTEXT, or run in a cluster)") from None


def unreachable(api: Any, timeout: float) -> str | None:
    """Why the API server did not answer GET /version (one line), or None when it answered anything at all.

    An HTTP answer (even 401 or 403) means the cluster was reached; only a transport failure (refused, timed out,
    no route, TLS) counts as unreachable."""
    from kubernetes.client import VersionApi
    from kubernetes.client.exceptions import ApiException

    try:
        VersionApi(api).get_code(_request_timeout=timeout)
    except ApiException:
        return None
    except Exception as err:  # urllib3's MaxRetryError, timeouts, TLS errors: the transport failed
        reason = getattr(err, "reason", None) or err
        # urllib3 names the connection before the cause ("HTTPConnection(host=..., port=...): Failed to ..."):
        return f"{api.configuration.host}: {str(reason).splitlines()[0].split('): ', 1)[-1]}"
    return None
