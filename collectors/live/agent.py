"""The node agents: kernel log, conntrack counters, interface MTUs, pod cgroup cpu.stat, GPU pods' /dev/shm and
NVML, per node.

Nodes are read concurrently (bounded); each node's calls run in order, and the first one doubles as the
probe: an agent that is down, slow or refuses the token becomes one `missing` entry for the node and
its remaining calls are skipped, so a dead node costs one timeout, not four. Answers are stored as
artifacts exactly as the agent served them, with the command a person would run on the node instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import httpx

from collectors.live.base import NodeRef, PodRef, Scope, SourceResult, Window, artifact_id
from collectors.models import Artifact, ArtifactKind, Missing

SOURCE = "agent"
MAX_WORKERS = 16
MAX_PODS_PER_NODE = 20
# The agent refuses windows over 7 days; stay a little inside so clock skew cannot tip a request over.
_MAX_LOOKBACK = timedelta(days=7) - timedelta(minutes=5)
_NO_CGROUP_PHASES = frozenset({"Pending", "Succeeded", "Failed"})  # no running containers to read
_SAFE_PATH = re.compile(r"[\w.,:@/-]{1,512}")


class _NodeDown(Exception):
    """The agent cannot be used at all; the message is the reason a person reads."""


@dataclass
class _Node:
    """One node's agent session: what it has gathered so far."""

    node: NodeRef
    client: httpx.Client
    window: Window
    result: SourceResult = field(default_factory=SourceResult)

    @property
    def where(self) -> str:
        return f"{SOURCE}:node/{self.node.name}"

    def miss(self, reason: str) -> None:
        self.result.missing.append(Missing(source=self.where, reason=reason))

    def get(self, path: str, params: Mapping[str, str]) -> httpx.Response | None:
        """The answer, None after a per-request error (recorded); _NodeDown when the agent is unusable."""
        try:
            response = self.client.get(path, params=dict(params))
        except httpx.TimeoutException:
            raise _NodeDown(f"agent at {self.client.base_url} timed out after {_timeout(self.client):g}s") from None
        except httpx.TransportError as err:
            raise _NodeDown(f"agent at {self.client.base_url} unreachable: {type(err).__name__}: {err}") from None
        if response.status_code in (401, 403):
            raise _NodeDown(f"agent at {self.client.base_url} refused the token (HTTP {response.status_code})")
        if response.status_code >= 400:
            self.miss(f"{path}: {_error(response)}")
            return None
        return response

    def add(self, kind: ArtifactKind, name: str, subject: str, command: str, content: str) -> None:
        self.result.artifacts.append(Artifact(
            id=name, kind=kind, subject=subject, source=SOURCE, command=command,
            captured_at=datetime.now(UTC), content=content))


def _timeout(client: httpx.Client) -> float:
    return client.timeout.read or 0.0


def _error(response: httpx.Response) -> str:
    """The agent's JSON error, else the status line."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        expected = body.get("expected")
        return f"HTTP {response.status_code}: {body['error']}" + (f" (expected {expected})" if expected else "")
    return f"HTTP {response.status_code}: {response.text[:200].strip()}"


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- the calls ----------------------------------------------------------------------------------------


def _since(window: Window) -> datetime:
    since = window.since if window.since.tzinfo else window.since.replace(tzinfo=UTC)  # naive means UTC here
    return max(since, datetime.now(UTC) - _MAX_LOOKBACK)


def _kept(session: _Node, path: str, params: Mapping[str, str], kind: ArtifactKind, file: tuple[str, str],
          command: str) -> httpx.Response | None:
    """The agent's answer about the node, kept as an artifact named by `file` (part, extension), or None."""
    response = session.get(path, params)
    if response is not None:
        name = session.node.name
        session.add(kind, artifact_id(SOURCE, name, file[0]) + file[1], f"node/{name}",
                    f"{command}  # on node {name}", response.text)
    return response


def _kernel_log(session: _Node) -> None:
    since = _since(session.window)
    response = _kept(session, "/v1/kernel-log", {"since": _rfc3339(since)}, ArtifactKind.KERNEL_LOG, ("kernel", ".log"),
                     f"journalctl -k --no-pager --since '{since.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC'")
    if response is not None and response.headers.get("x-triagebot-truncated") == "true":
        session.miss("kernel log cut at the agent's size limit; later lines were not read")


def _conntrack(session: _Node) -> None:
    _kept(session, "/v1/conntrack", {}, ArtifactKind.CONNTRACK_STATS, ("conntrack", ".txt"),
          "conntrack -S; sysctl net.netfilter.nf_conntrack_count net.netfilter.nf_conntrack_max")


def _net_links(session: _Node) -> None:
    _json_snapshot(session, "/v1/net-links", {}, ArtifactKind.NET_LINKS, "net-links", "ip -d link",
                   "network interfaces")


def _cpu_stats(session: _Node, pods: list[PodRef], namespace: str, pod_uids: Mapping[str, str]) -> None:
    readable = [p for p in pods if p.phase not in _NO_CGROUP_PHASES]
    if len(readable) > MAX_PODS_PER_NODE:
        session.miss(f"cpu.stat read for the first {MAX_PODS_PER_NODE} of {len(readable)} pods on the node")
    for pod in readable[:MAX_PODS_PER_NODE]:
        uid = pod.uid or pod_uids.get(pod.name, "")
        if not uid:
            session.miss(f"cpu.stat of pod {pod.namespace or namespace}/{pod.name}: its UID is not known")
            continue
        for container in pod.containers or [""]:
            _cpu_stat(session, pod, namespace, uid, container)


def _cpu_stat(session: _Node, pod: PodRef, namespace: str, uid: str, container: str) -> None:
    params = {"pod_uid": uid} | ({"container": container} if container else {})
    response = session.get("/v1/cpu-stat", params)
    if response is None:
        return
    path = response.headers.get("x-triagebot-cgroup", "")
    # The header comes from another machine: only a plain path goes into a command a person may paste.
    shown = path if _SAFE_PATH.fullmatch(path) and ".." not in path else "<pod cgroup>/cpu.stat"
    name = session.node.name
    session.add(ArtifactKind.CPU_STAT, artifact_id(SOURCE, name, "cpu", pod.name, container or "pod") + ".txt",
                f"pod/{pod.namespace or namespace}/{pod.name}", f"cat /sys/fs/cgroup/{shown}  # on node {name}",
                response.text)


def _shm(session: _Node, pods: list[PodRef], namespace: str, pod_uids: Mapping[str, str]) -> None:
    """/dev/shm of the node's GPU pods: NCCL's intra-node transport and DataLoader workers live in it."""
    for pod in [p for p in pods if p.gpu_request > 0 and p.phase not in _NO_CGROUP_PHASES][:MAX_PODS_PER_NODE]:
        uid = pod.uid or pod_uids.get(pod.name, "")
        if not uid:
            continue  # said once already by the cpu.stat pass
        response = session.get("/v1/shm", {"pod_uid": uid})
        if response is None:
            continue
        ns, name = pod.namespace or namespace, session.node.name
        session.add(ArtifactKind.DF, artifact_id(SOURCE, name, "shm", pod.name) + ".json", f"pod/{ns}/{pod.name}",
                    f"kubectl exec -n {ns} {pod.name} -- df -h /dev/shm  # from the agent on node {name}",
                    response.text)


def _nvml(session: _Node) -> None:
    _json_snapshot(session, "/v1/nvml", {"since": _rfc3339(_since(session.window))}, ArtifactKind.NVML, "nvml",
                   "nvidia-smi -q", "NVML")


def _json_snapshot(session: _Node, path: str, params: dict[str, str], kind: ArtifactKind, part: str, command: str,
                   what: str) -> None:
    """An agent answer that is a JSON snapshot with an `available` flag, kept as an artifact."""
    response = _kept(session, path, params, kind, (part, ".json"), command)
    if response is None:
        return
    try:
        doc = json.loads(response.text)
    except ValueError:
        session.miss(f"{what} answer is not JSON")
        return
    if isinstance(doc, dict) and doc.get("available") is not True:
        # Said here as well as in the artifact so the report lists which evidence stays unknown.
        session.miss(f"{what} unavailable on node {session.node.name}: {doc.get('error') or 'no reason given'}")

def _has_gpus(node: NodeRef, pods: list[PodRef]) -> bool:
    return node.gpu_capacity > 0 or any(p.gpu_request > 0 for p in pods)


def _collect_node(node: NodeRef, base_url: str | None, token: str, scope: Scope, window: Window, timeout: float,
                  pod_uids: Mapping[str, str]) -> SourceResult:
    where = f"{SOURCE}:node/{node.name}"
    if not base_url:
        return SourceResult(missing=[Missing(source=where, reason="no agent address for the node")])
    pods = [p for p in scope.pods if p.node == node.name]
    # trust_env off: agents are reached directly inside the cluster, never through a configured HTTP proxy.
    client = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"},
                          timeout=httpx.Timeout(timeout), follow_redirects=False, trust_env=False)
    session = _Node(node, client, window)
    try:
        _kernel_log(session)
        _conntrack(session)
        _net_links(session)
        _cpu_stats(session, pods, scope.namespace, pod_uids)
        if _has_gpus(node, pods):
            _shm(session, pods, scope.namespace, pod_uids)
            _nvml(session)
    except _NodeDown as down:
        session.miss(str(down))
    finally:
        client.close()
    return session.result


def collect_agent(url_for_node: Callable[[NodeRef], str | None], token: str, scope: Scope, window: Window, *,
                  timeout: float = 5.0, pod_uids: Mapping[str, str] | None = None,
                  max_workers: int = MAX_WORKERS) -> SourceResult:
    """Kernel log, conntrack, interfaces, cpu.stat of the scope's pods, and /dev/shm and NVML on GPU nodes, from
    each node's agent.

    `pod_uids` maps pod name to UID for pods whose PodRef has none.
    """
    result = SourceResult()
    if not scope.nodes:
        return result
    uids = dict(pod_uids or {})
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(scope.nodes))),
                            thread_name_prefix="agent") as pool:
        futures = [pool.submit(_guarded, node, url_for_node, token, scope, window, timeout, uids)
                   for node in scope.nodes]
        for future in futures:
            result.extend(future.result())
    return result


def _guarded(node: NodeRef, url_for_node: Callable[[NodeRef], str | None], token: str, scope: Scope,
             window: Window, timeout: float, pod_uids: Mapping[str, str]) -> SourceResult:
    """One node's result; a bug or a bad URL on one node never costs the others."""
    try:
        return _collect_node(node, url_for_node(node), token, scope, window, timeout, pod_uids)
    except Exception as err:
        return SourceResult(missing=[Missing(source=f"{SOURCE}:node/{node.name}",
                                             reason=f"failed: {type(err).__name__}: {err}")])
