"""The nodes read in one Kubernetes collection run: objects, events, describe, kubelet logs, GPU allocation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from collectors.live.k8s_calls import Failure
from collectors.live.k8s_gpu import candidate_gpu_nodes, describe_node, non_terminated
from collectors.live.k8s_logs import kubelet_nodes, read_kubelet_log
from collectors.live.k8s_resolve import Resolved
from collectors.live.k8s_run import CollectionBase
from collectors.live.k8s_util import (
    dump,
    items_of,
    kubectl,
    list_doc,
    name_of,
    node_of,
    phase,
    triage_order,
    troubled,
    wants_gpu,
)
from collectors.models import ArtifactKind

EVENT_NODE_CAP = 10  # nodes (of troubled pods) whose events are read beside the NodeList
NODE_CAP = 30  # pods' nodes read as objects (nodes of troubled pods first)
GPU_NODE_CAP = 40  # GPU nodes whose allocation is rendered for a pending GPU pod
_LABEL_VALUE = re.compile(r"[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?")  # node names that fit in a label value


class NodeReads(CollectionBase):
    """The nodes of the target's pods: their objects and events, a describe for each, kubelet logs, and GPU
    allocation across GPU nodes for a pending GPU pod."""

    def _event_nodes(self, r: Resolved) -> set[str]:
        """Nodes whose events are worth a call: those of troubled pods, else of the first few pods."""
        ordered = triage_order(r.pods)
        chosen = [node_of(p) for p in ordered if troubled(p) and node_of(p)]
        chosen = chosen or [node_of(p) for p in ordered if node_of(p)][:3]
        return set(list(dict.fromkeys(chosen))[:EVENT_NODE_CAP])

    def _kubelet_logs(self, nodes: list[str]) -> None:
        if not nodes:
            return
        if not self.limits.kubelet_logs:
            # Said once, so the reader knows the kubelet's side was not looked at, and why.
            self.missing(self.out.slot(), "kubelet-log", "not read: kubelet_logs is off (it needs get on nodes/proxy)")
            return
        for node in nodes:
            read_kubelet_log(self, self.calls, node, self._since(), self.limits)

    def _nodes(self, r: Resolved) -> None:
        if r.node is not None:
            self.nodes[r.name] = r.node
            self._describe(r.node, non_terminated(r.pods), self.out.slot())
            self._kubelet_logs([r.name])
            return
        names = list(dict.fromkeys(node_of(p) for p in triage_order(r.pods) if node_of(p)))
        self._kubelet_logs(kubelet_nodes(r.pods))
        pending_gpu = [p for p in r.pods if phase(p) == "Pending" and not node_of(p) and wants_gpu(p)]
        if pending_gpu:
            self._gpu_allocation(pending_gpu, names, self._event_nodes(r))
            return
        if len(names) > NODE_CAP:
            self.missing(self.out.slot(), "nodes", f"read {NODE_CAP} of the pods' {len(names)} nodes "
                                                   f"(nodes of troubled pods first)")
        self._node_objects(names[:NODE_CAP], self._event_nodes(r))

    def _node_objects(self, names: list[str], event_nodes: set[str]) -> None:
        """The pods' nodes as one NodeList; the events of the nodes that matter beside it.

        One list call by the hostname label fetches them all (the label is the node name nearly everywhere);
        a node it misses (a differing label, a name too long for a label) is read on its own.
        """
        if not names:
            return
        slot = self.out.slot()
        answers: dict[str, dict[str, Any] | Failure] = {}
        calls = self.calls

        def settle(name: str, result: dict[str, Any] | Failure) -> None:
            answers[name] = result
            if len(answers) == len(names):
                self._node_list(slot, [answers[n] for n in names], names)

        def read_one(name: str) -> None:
            self.fetch(lambda: calls.get(calls.core.read_node, name), lambda _slot, result: settle(name, result))

        batch = [n for n in names if _LABEL_VALUE.fullmatch(n)] if len(names) > 1 else []
        for name in names:
            if name not in batch:
                read_one(name)
        if batch:
            selector = f"kubernetes.io/hostname in ({','.join(batch)})"

            def then(_slot: int, result: dict[str, Any] | Failure) -> None:
                listed = {} if isinstance(result, Failure) else {name_of(n): n for n in items_of(result)}
                for name in batch:
                    if name in listed:
                        settle(name, listed[name])
                    else:
                        read_one(name)

            self.fetch(lambda: calls.get_list(calls.core.list_node, label_selector=selector), then)
        for name in names:
            if name in event_nodes:
                self._events("Node", name, None, f"node/{name}")

    def _node_list(self, slot: int, results: Sequence[dict[str, Any] | Failure], names: list[str]) -> None:
        found: list[dict[str, Any]] = []
        for name, result in zip(names, results, strict=True):
            if isinstance(result, Failure):
                self.missing(slot, f"node/{name}", result.reason)
            else:
                self.nodes[name] = result
                found.append(result)
        if found:
            single = f"node/{name_of(found[0])}" if len(found) == 1 else "nodes"
            self.artifact(slot, ArtifactKind.NODE, ("nodes",), ".json", single,
                          kubectl("get", "nodes", *[name_of(n) for n in found], "-o", "json"),
                          dump(list_doc("v1", "Node", found)))

    def _gpu_allocation(self, pending: list[dict[str, Any]], pod_nodes: list[str], event_nodes: set[str]) -> None:
        """For pending GPU pods: every GPU node they could run on, described with its allocation.

        Nodes are listed once (a node list is cluster-scoped by nature; only pods and events must never be
        listed cluster-wide), then each candidate's non-terminated pods are read by spec.nodeName.
        """
        wanted = set(pod_nodes[:NODE_CAP])
        calls = self.calls

        def thunk() -> list[dict[str, Any]] | Failure:
            kept: list[dict[str, Any]] = []
            for page in calls.pages(calls.core.list_node):
                if isinstance(page, Failure):
                    return kept if kept else page
                # Filtered page by page so a 5,000-node cluster never sits in memory whole.
                kept += [n for n in items_of(page) if name_of(n) in wanted or candidate_gpu_nodes([n], pending)]
            return kept

        def then(slot: int, result: list[dict[str, Any]] | Failure) -> None:
            if isinstance(result, Failure):
                self.missing(slot, "nodes", result.reason + " (GPU allocation across nodes is unknown)")
                self._node_objects(pod_nodes[:NODE_CAP], event_nodes)
                return
            gpu_nodes = candidate_gpu_nodes(result, pending)
            described = gpu_nodes[:GPU_NODE_CAP]
            if len(gpu_nodes) > GPU_NODE_CAP:
                self.missing(slot, "gpu-allocation", f"described {GPU_NODE_CAP} of {len(gpu_nodes)} GPU nodes; "
                                                     "free GPU totals are a lower bound")
            for node in described:
                self.nodes[name_of(node)] = node
                self._describe(node, None, self.out.slot())
            done = {name_of(n) for n in described}
            rest = [n for n in result if name_of(n) in wanted and name_of(n) not in done]
            for node in rest:
                self.nodes[name_of(node)] = node
            if rest:
                self._node_list(self.out.slot(), rest, [name_of(n) for n in rest])
                for node in rest:
                    if name_of(node) in event_nodes:
                        self._events("Node", name_of(node), None, f"node/{name_of(node)}")

        self.fetch(thunk, then)

    def _describe(self, node: dict[str, Any], pods: list[dict[str, Any]] | None, slot: int) -> None:
        """`kubectl describe node` for one node: its non-terminated pods (read by spec.nodeName unless
        given) and its events, rendered once both are in."""
        name = name_of(node)
        parts: dict[str, Any] = {}

        def ready() -> None:
            if "pods" not in parts or "events" not in parts:
                return
            if parts["pods"] is None:
                return  # without the pods the allocation is unknown; the failure is reported
            text = describe_node(node, non_terminated(parts["pods"]), parts["events"], datetime.now(UTC))
            self.artifact(slot, ArtifactKind.DESCRIBE_NODE, ("describe", "node", name), ".txt", f"node/{name}",
                          kubectl("describe", "node", name), text)

        def got_pods(result: list[dict[str, Any]] | Failure) -> None:
            if isinstance(result, Failure):
                self.missing(slot, f"pods on node/{name}", result.reason + " (GPU allocation unknown)")
                parts["pods"] = None
            else:
                parts["pods"] = result
            ready()

        def got_events(events: list[dict[str, Any]] | None) -> None:
            parts["events"] = events
            ready()

        if pods is None:
            self.fetch(lambda: self._pods_on_node(name), lambda _slot, result: got_pods(result))
        else:
            parts["pods"] = pods
        self._events("Node", name, None, f"node/{name}", into=got_events)

    def _pods_on_node(self, node: str) -> list[dict[str, Any]] | Failure:
        """The node's non-terminated pods with kubectl describe's own field selector; a server that cannot
        filter on phase gets the plain node selector and is filtered here."""
        core = self.calls.core
        selector = f"spec.nodeName={node},status.phase!=Succeeded,status.phase!=Failed"
        result = self.calls.get_list(core.list_pod_for_all_namespaces, field_selector=selector)
        if isinstance(result, Failure) and result.status == 400:
            result = self.calls.get_list(core.list_pod_for_all_namespaces, field_selector=f"spec.nodeName={node}")
        return result if isinstance(result, Failure) else non_terminated(items_of(result))
