"""Does a NetworkPolicy (or a CiliumNetworkPolicy) let the pods it selects reach DNS?

Seed 001:332: a lookup that times out means CoreDNS is unreachable; check CoreDNS and the NetworkPolicies. Once a
policy restricts a pod's egress, only what its rules allow leaves the pod, and a rule list written for the app's
own traffic (its backend on 443) forgets UDP/TCP 53 to kube-dns: every name the pod resolves then times out.

The rules are read as the API defines them (kubernetes/api networking/v1 NetworkPolicyEgressRule: `to` peers and
`ports`; cilium/cilium pkg/policy/api EgressRule: toEndpoints, toEntities, toCIDR(Set), toFQDNs, toServices and
toPorts). A rule carries DNS when its ports include 53 (or a port named dns), or when it names no ports and its
destinations may hold kube-dns. Where that cannot be told (an ipBlock, a namespace selector by other labels), the
rule is taken to allow DNS: the fact is stated only when no rule can.
"""

from __future__ import annotations

from typing import Any

from collectors.k8s_values import as_dict, as_int, as_list, as_str

DNS_PORT = 53
# Port names kube-dns and CoreDNS's Service use (kubernetes/kubernetes cluster/addons/dns): dns, dns-tcp.
_DNS_NAMES = frozenset({"dns", "dns-tcp", "domain"})
# Keys of an egress rule in either API; a list of mappings with only these keys is a pasted rule list.
K8S_RULE_KEYS = frozenset({"to", "ports"})
CILIUM_RULE_KEYS = frozenset({"toEndpoints", "toEntities", "toCIDR", "toCIDRSet", "toFQDNs", "toServices",
                              "toPorts", "toGroups", "toRequires", "toNodes", "icmps", "authentication"})
# Cilium entities that include the cluster's DNS pods (cilium pkg/policy/api/entity.go).
_DNS_ENTITIES = frozenset({"all", "cluster"})


def egress_rules(spec: dict[str, Any], cilium: bool) -> list[dict[str, Any]] | None:
    """The policy's egress rules when it restricts egress, else None."""
    if cilium:
        # A Cilium rule set restricts egress once it has any egress (or egressDeny) section.
        if "egress" not in spec and "egressDeny" not in spec:
            return None
    else:
        types = [as_str(t) for t in as_list(spec.get("policyTypes"))]
        if "Egress" not in types and not (not types and "egress" in spec):
            return None
    return [as_dict(r) for r in as_list(spec.get("egress"))]


def dns_blocked(rules: list[dict[str, Any]]) -> bool:
    """No rule of a restricting egress section lets DNS out."""
    return not any(_carries_dns(rule) for rule in rules)


def _carries_dns(rule: dict[str, Any]) -> bool:
    ports = _ports(rule)
    if ports:
        return any(_is_dns_port(p) for p in ports)
    return _may_hold_dns(rule)


def _ports(rule: dict[str, Any]) -> list[dict[str, Any]]:
    """The ports a rule limits itself to; [] when it names none (all ports)."""
    out = [as_dict(p) for p in as_list(rule.get("ports"))]
    for to_port in map(as_dict, as_list(rule.get("toPorts"))):
        if as_dict(to_port.get("rules")).get("dns"):
            out.append({"port": str(DNS_PORT)})  # an L7 DNS rule is on the DNS port by definition
        out += [as_dict(p) for p in as_list(to_port.get("ports"))]
    return out


def _is_dns_port(port: dict[str, Any]) -> bool:
    raw = port.get("port")
    if raw is None:
        return True  # a protocol without a port: every port of that protocol
    number = as_int(raw)
    if number is None:
        return as_str(raw).lower() in _DNS_NAMES
    end = as_int(port.get("endPort")) or number
    return number == 0 or number <= DNS_PORT <= end  # Cilium's "0" is any port


def _may_hold_dns(rule: dict[str, Any]) -> bool:
    """Whether a rule without ports may reach kube-dns: no destination named, or one that could be it."""
    peers = [as_dict(p) for p in as_list(rule.get("to"))]
    cilium = {k: as_list(rule.get(k)) for k in CILIUM_RULE_KEYS - {"toPorts", "icmps", "authentication"}}
    if not peers and not any(cilium.values()):
        return True  # no destination named: everywhere
    # networking/v1 peers: an ipBlock or a namespaceSelector may well cover kube-dns; a podSelector alone stays in
    # the policy's namespace, which holds kube-dns only if it is kube-system (unknown here: allowed).
    if any("ipBlock" in p or "namespaceSelector" in p or _may_select_dns(as_dict(p.get("podSelector")))
           for p in peers):
        return True
    if any(as_str(e) in _DNS_ENTITIES for e in cilium["toEntities"]) or cilium["toCIDR"] or cilium["toCIDRSet"]:
        return True
    return any(_may_select_dns(as_dict(e)) for e in cilium["toEndpoints"])


# Labels that put a Cilium endpoint selector in a namespace (cilium pkg/k8s/apis/cilium.io: the pod's namespace
# label, with or without the k8s: source prefix) or a namespace selector on a name.
_NAMESPACE_KEYS = frozenset({"io.kubernetes.pod.namespace", "k8s:io.kubernetes.pod.namespace",
                             "kubernetes.io/metadata.name"})


def _may_select_dns(selector: dict[str, Any]) -> bool:
    """A label selector that may pick the DNS pods: empty, set-based (not judged), naming kube-dns or CoreDNS, or
    only the kube-system namespace."""
    labels = {str(k): as_str(v) for k, v in as_dict(selector.get("matchLabels")).items()}
    if not labels or selector.get("matchExpressions"):
        return True
    if any(v in ("kube-dns", "coredns") for v in labels.values()):
        return True
    return set(labels) <= _NAMESPACE_KEYS and "kube-system" in labels.values()
