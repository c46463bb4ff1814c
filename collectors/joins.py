"""Facts that need two artifacts: the node a suspect rank's pod runs on; a Service against its pods.

A rank's log names its pod (`kubectl logs --prefix`), and only the Pod object names the node. The NCCL parser
gives `nccl.suspect_pods`; the Pod parser gives `pod.node` per pod. Joined, the straggler's node becomes a
`nccl.suspect_hosts` value, cited to the Pod line that binds it, so the Xid cross-check on the straggler's node
works without hostNetwork. Pure: facts in, facts out.
"""

from __future__ import annotations

from dataclasses import replace

from collectors.factset import FactSet
from collectors.models import Fact
from collectors.parsers.sink import emitted_at

JOIN = "join:pod-node"


def suspect_nodes(facts: FactSet) -> list[Fact]:
    """One `nccl.suspect_hosts` fact per suspect pod whose Pod object names its node."""
    pods = facts.get("nccl.suspect_pods")
    bound = facts.get("pod.node")
    if pods is None or bound is None:
        return []
    nodes: dict[str, Fact] = {}
    for fact in bound.sources:
        name = fact.subject.rsplit("/", 1)[-1] if fact.subject.startswith("pod/") else ""
        if name and isinstance(fact.value, str) and fact.value:
            nodes.setdefault(name, fact)
    out: list[Fact] = []
    for pod in pods.value:
        found = nodes.get(pod)
        if found is not None:
            out.append(replace(found, name="nccl.suspect_hosts", value=[found.value], parser=JOIN,
                               origin=emitted_at()))
    return out


# ---- a Service against the pods and NetworkPolicies pasted beside it ------------------------------------------
# Seed 001:319-345 asks of an unreachable Service: does its selector match the pods' labels, is its targetPort a
# port the containers have, and does a NetworkPolicy select those pods. Each side may come from its own block of
# the paste (a Service YAML, then a Deployment YAML), so the answer is a join of facts, not one parser's.

SERVICE_JOIN = "join:service-backends"


def _by_subject(facts: FactSet, name: str) -> dict[str, tuple[Fact, list[str]]]:
    merged = facts.get(name)
    out: dict[str, tuple[Fact, list[str]]] = {}
    for fact in merged.sources if merged else []:
        if fact.subject and isinstance(fact.value, list):
            first, values = out.get(fact.subject, (fact, []))
            out[fact.subject] = (first, values + [str(v) for v in fact.value if str(v) not in values])
    return out


def _namespace(subject: str) -> str:
    parts = subject.split("/")
    return parts[1] if len(parts) == 3 else ""


def _pairs(items: list[str] | str) -> dict[str, str]:
    raw = items.split(",") if isinstance(items, str) else items
    return dict(item.split("=", 1) for item in raw if "=" in item)


def service_backends(facts: FactSet) -> list[Fact]:
    """Selector, targetPort and NetworkPolicy facts for each Service whose pods (or pod templates) were pasted."""
    selectors = facts.get("service.selector")
    pods = _by_subject(facts, "pod.labels")
    policies = _by_subject(facts, "netpol.ingress_selectors")
    if selectors is None:
        return []
    if not pods:
        return _every_pod_policies(selectors.sources, policies)
    ports = _by_subject(facts, "pod.container_ports")
    targets = _by_subject(facts, "service.target_ports")
    out: list[Fact] = []
    for sel in selectors.sources:
        if not isinstance(sel.value, str) or not sel.subject:
            continue
        ns = _namespace(sel.subject)
        wanted = _pairs(sel.value)
        near = {s: labels for s, (_, labels) in pods.items() if not ns or not _namespace(s) or _namespace(s) == ns}
        if not near or not wanted:
            continue
        chosen = [s for s, labels in near.items() if wanted.items() <= _pairs(labels).items()]

        fact = _Joined(sel)
        out.append(fact("service.selector_matches_pods", bool(chosen)))
        if chosen and sel.subject in targets:
            out += _target_ports(fact, targets[sel.subject], [ports[s][1] for s in chosen if s in ports])
        restricting = [(f, v) for s, (f, v) in policies.items() if not ns or not _namespace(s) or _namespace(s) == ns]
        if restricting:
            labels = [_pairs(near[s]) for s in chosen]
            hits = [f for f, values in restricting for v in values
                    if v == "*" or any(_pairs(v).items() <= pod.items() for pod in labels)
                    or _pairs(v).items() <= wanted.items()]
            out.append(fact("netpol.selects_backends", bool(hits), hits[0] if hits else restricting[0][0]))
    return out


def _every_pod_policies(selectors: list[Fact], policies: dict[str, tuple[Fact, list[str]]]) -> list[Fact]:
    """With no pods pasted: a policy whose empty podSelector (`*`) takes every pod of the Service's namespace
    takes its backends too, whatever their labels (a Service's endpoints are pods of its own namespace)."""
    out: list[Fact] = []
    for sel in selectors:
        if not isinstance(sel.value, str) or not sel.subject:
            continue
        ns = _namespace(sel.subject)
        every = [f for s, (f, values) in policies.items()
                 if "*" in values and (not ns or not _namespace(s) or _namespace(s) == ns)]
        if every:
            out.append(_Joined(sel)("netpol.selects_backends", True, every[0]))
    return out


class _Joined:
    """Makes a joined fact about one Service, cited to the line of the fact it was joined from."""

    def __init__(self, service: Fact) -> None:
        self.service = service

    def __call__(self, name: str, value: object, at: Fact | None = None) -> Fact:
        return replace(at or self.service, name=name, value=value, subject=self.service.subject, parser=SERVICE_JOIN,
                       origin=emitted_at(1))


def _target_ports(fact: _Joined, target: tuple[Fact, list[str]], declared: list[list[str]]) -> list[Fact]:
    """Named targetPorts no selected container declares (the pods are left out of the endpoints), and numeric ones
    none declares while they declare others (containerPort is informational: a hint only)."""
    if not declared:
        return []
    at, wanted = target
    numbers = {p.split("/", 1)[0] for pod in declared for p in pod}
    names = {p.split("/", 1)[1] for pod in declared for p in pod if "/" in p} - {"-"}
    out: list[Fact] = []
    # Port names are known only from objects ("8080/http", "8080/-"); a description shows numbers alone.
    knows_names = all("/" in p for pod in declared for p in pod)
    missing = [t for t in wanted if not t.isdigit() and t not in names] if knows_names else []
    if missing:
        out.append(fact("service.target_port_names_missing", missing, at))
    undeclared = [t for t in wanted if t.isdigit() and numbers and t not in numbers]
    if undeclared:
        out.append(fact("service.target_port_numbers_undeclared", undeclared, at))
    return out


# ---- ports that something in the pod dials, against the ports its containers declare ---------------------------
# Seed 001:319-345: "does the container listen on the targetPort". The same question holds for the pod's own
# clients: a probe checks a port, a sidecar dials 127.0.0.1:port. A container port's name resolves only against
# the pod's own ports (a probe on an unknown name fails every time); a number no container declares, while they
# declare others, is a hint (containerPort is informational) that turns into evidence when the dial is refused.

PORT_JOIN = "join:pod-ports"


def _declared(values: list[str]) -> tuple[set[str], set[str], bool]:
    """Numbers and names of declared ports ("8080/http", "8080/-"), and whether names are known at all."""
    numbers = {v.split("/", 1)[0] for v in values}
    names = {v.split("/", 1)[1] for v in values if "/" in v} - {"-"}
    return numbers, names, all("/" in v for v in values)


def _undeclared(port: str, numbers: set[str], names: set[str], knows_names: bool) -> bool:
    if port.isdigit():
        return bool(numbers) and port not in numbers
    return knows_names and port not in names


def pod_ports(facts: FactSet) -> list[Fact]:
    """probe.ports_undeclared per pod (or template); for a refused loopback dial to a port no pasted container
    declares: client.errors, client.targets and client.ports_undeclared, cited to the refused line."""
    declared = _by_subject(facts, "pod.container_ports")
    out: list[Fact] = []
    for subject, (at, probes) in _by_subject(facts, "pod.probe_ports").items():
        if subject not in declared:
            continue
        numbers, names, knows = _declared(declared[subject][1])
        missing = [p for p in probes if ":" in p and _undeclared(p.split(":", 1)[1], numbers, names, knows)]
        if missing:
            out.append(replace(at, name="probe.ports_undeclared", value=missing, parser=PORT_JOIN))
    loopback = facts.get("client.loopback_refused")
    every = [v for _, values in declared.values() for v in values]
    numbers = _declared(every)[0]
    for fact in loopback.sources if loopback and numbers else []:
        targets = [str(t) for t in fact.value] if isinstance(fact.value, list) else []
        for target in targets:
            port = target.rsplit(":", 1)[-1]
            if port.isdigit() and port not in numbers:
                for name, value in (("client.errors", ["refused"]), ("client.targets", [target]),
                                    ("client.ports_undeclared", [port])):
                    out.append(replace(fact, name=name, value=value, parser=PORT_JOIN))
    return out


# ---- a client's "no route" against the Services pasted beside it ---------------------------------------------
# Seed 001:309-318, step 3: "Service IP reachable? No: check kube-proxy". A pod that is not listening refuses; "no
# route to host" for an address a pasted Service owns comes from the node's rules for that ClusterIP (rules not
# written, or a host firewall's REJECT in their place), whatever the pods behind it do.

CLUSTER_IP_JOIN = "join:cluster-ip-route"


def cluster_ip_no_route(facts: FactSet) -> list[Fact]:
    """client.cluster_ip_no_route for each no-route target whose host is the ClusterIP of a pasted Service."""
    owned = facts.get("service.cluster_ips")
    failed = facts.get("client.no_route_targets")
    if owned is None or failed is None:
        return []
    ips = {str(ip) for fact in owned.sources if isinstance(fact.value, list) for ip in fact.value}
    out: list[Fact] = []
    for fact in failed.sources:
        # "ip:port", or a bare ip where the client prints no port (BusyBox's wget and nc).
        hits = [str(t) for t in fact.value if str(t) in ips or str(t).rsplit(":", 1)[0] in ips] \
            if isinstance(fact.value, list) else []
        if hits:
            out.append(replace(fact, name="client.cluster_ip_no_route", value=hits, parser=CLUSTER_IP_JOIN,
                               origin=emitted_at()))
    return out


# ---- a Service `kubectl expose` made, against the pod table beside it -------------------------------------------
# kubectl expose copies the workload's selector into the Service (kubectl pkg/cmd/expose), so the pods of that
# workload are its backends. A pod table showing them all Running and ready says the Service has ready endpoints:
# a client refused there reached a pod whose port is closed (seed 001:319-345, "does the container listen on the
# targetPort?"), not an empty Service.

EXPOSED_JOIN = "join:exposed-pods-ready"


def exposed_pods_ready(facts: FactSet) -> list[Fact]:
    """service.exposed_pods_ready when a pasted pod table, every pod ready, holds a pod of an exposed workload."""
    exposed = facts.get("service.exposed_workloads")
    names = facts.get("pods.names")
    ready = facts.get("pods.all_ready")
    if exposed is None or names is None or ready is None or ready.value is not True:
        return []
    workloads = {str(w) for fact in exposed.sources if isinstance(fact.value, list) for w in fact.value}
    pods = {str(p) for fact in names.sources if isinstance(fact.value, list) for p in fact.value}
    # A Deployment's pods are <name>-<replicaset hash>-<suffix>, a StatefulSet's <name>-<ordinal>, a pod its name.
    if not any(pod == w or pod.startswith(f"{w}-") for w in workloads for pod in pods):
        return []
    source = next(f for f in ready.sources if f.value is True)
    return [replace(source, name="service.exposed_pods_ready", value=True, parser=EXPOSED_JOIN,
                    origin=emitted_at())]
