"""Kubernetes objects in the wrappers real pastes use (captions, fences, `---` with Helm's `# Source:` lines,
comment banners, bare rule lists), joined to each other: a Service's selector against the pods beside it, a
policy's egress rules against DNS. Every paste is verbatim from the thread named beside it, cut at whole lines."""

from __future__ import annotations

from typing import Any

import pytest

from collectors.paste import artifacts_from_text
from playbooks.pipeline import analyse

# https://github.com/kubernetes/minikube/issues/17027 (comment by vermabhaskar99, 2024-05-14): the selector and the
# template labels agree (app, tier, env), so the Service's pods are there; no port is declared.
MINIKUBE_17027 = (
    "Deployment.yaml -\n\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: myapp-deployment\n  labels:\n"
    "    app: nginx\n    tier: front-end\nspec:\n  replicas: 3 \n  selector:\n    matchLabels:\n"
    "      env: production # this sould match with labels env\n  template:\n    metadata:\n      name: bhaskar-pod\n"
    "      labels:\n        app: my-app # pls see this and place in other place\n        tier: front-end\n"
    "        env: production # this sould match with matchlabels env\n    spec:\n      containers:\n"
    "         - name: nginx-container\n           image: nginx\t\n\nService.yaml -\n\napiVersion: v1\n"
    "kind: Service\nmetadata:\n  name: myapp-service\nspec:\n  selector:\n    app:  my-app\n    tier: front-end\n"
    "    env: production\n  type: NodePort\n  ports:\n    - targetPort: 80\n      port: 80\n      nodePort: 30004\n")

# https://github.com/clickvisual/clickvisual/pull/414 (description): `helm template` output, documents split by
# `---` and Helm's `# Source:` comments; cut before the Deployment's template.
CLICKVISUAL_414 = """test out yaml: `helm template clickvisual data/helm/clickvisual --set image.tag=latest`
```yaml
---
# Source: clickvisual/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: clickvisual
data:
    default.toml: |-
---
# Source: clickvisual/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: clickvisual
  labels:
    helm.sh/chart: clickvisual-0.0.1
    app.kubernetes.io/name: clickvisual
    app.kubernetes.io/instance: clickvisual
    app.kubernetes.io/managed-by: Helm
spec:
  type: ClusterIP
  ports:
    - name: server
      port: 19001
      protocol: TCP
      targetPort: server
    - name: governor
      port: 19011
      protocol: TCP
      targetPort: governor
  selector:
    app.kubernetes.io/name: clickvisual
    app.kubernetes.io/instance: clickvisual
"""

# https://github.com/cloudnativelabs/kube-router/issues/1617 (description): a deny-all policy for Ingress and
# Egress, then one that lets DNS out (cut before its last line). The first alone blocks DNS; together they do not.
KUBE_ROUTER_1617_DENY = """```
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny-ingress
  namespace: test
spec:
  podSelector: {}
  policyTypes:
  - Ingress
  - Egress
"""
KUBE_ROUTER_1617 = KUBE_ROUTER_1617_DENY + (
    "---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: test-network-policy\n"
    "  namespace: test\nspec:\n  podSelector: {}\n  policyTypes:\n  - Ingress\n  - Egress\n  ingress:\n  - from:\n"
    "    - namespaceSelector:\n        matchLabels:\n          kubernetes.io/metadata.name: test\n  - from:\n"
    "    - namespaceSelector:\n        matchLabels:\n          kubernetes.io/metadata.name: kube-system          \n"
    "      podSelector:\n        matchLabels:\n          app.kubernetes.io/name: traefik\n    ports:\n"
    "      - protocol: TCP\n        port: http\n      - protocol: TCP\n        port: api\n  egress:\n  - to:\n"
    "    - namespaceSelector:\n        matchLabels:\n          kubernetes.io/metadata.name: test\n  - to:\n"
    "    - namespaceSelector:\n        matchLabels:\n          kubernetes.io/metadata.name: kube-system\n"
    "      podSelector:\n        matchLabels:\n          app.kubernetes.io/name: coredns  \n    ports:\n"
    "      - port: 53\n        protocol: UDP\n")

# https://github.com/aws/amazon-network-policy-controller-k8s/issues/146 (description): the second rule lets DNS out.
AWS_NPC_146 = """```
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: curl
  namespace: default
spec:
  egress:
  - to:
    - ipBlock:
        cidr: 0.0.0.0/0
        except:
          - 10.0.0.0/8
          - 172.16.0.0/12
          - 192.168.0.0/16
  - ports:
      - protocol: UDP
        port: 53
      - port: 53
        protocol: TCP
  policyTypes:
    - Egress
  podSelector:
    matchLabels:
      app: curl
```
"""

# https://github.com/aws/aws-network-policy-agent/issues/230 (comment by Pacobart, 2024-03-07): an `egress:` section
# pasted alone, the DNS rule itself.
AWS_NPA_230 = """```
  egress:
    - to:
      - namespaceSelector:
          matchLabels:
            kubernetes.io/metadata.name: kube-system
        podSelector:
          matchLabels:
            k8s-app: kube-dns
      ports:
        - port: 53
          protocol: UDP
        - port: 53
          protocol: TCP
```
"""

# https://github.com/cilium/cilium/issues/31803 (description): a CiliumNetworkPolicy whose only egress rule is
# toFQDNs on 80 and 443: no rule carries DNS.
CILIUM_31803 = """```
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  creationTimestamp: "2024-04-04T20:18:39Z"
  generation: 12
  name: egress-test
  namespace: us-east-1
  resourceVersion: "476002"
  uid: 40c93d1d-9f69-4b2f-b546-3c3c4d4eeeb2
spec:
  egress:
  - toFQDNs:
    - matchPattern: my.domain.com
    toPorts:
    - ports:
      - port: "80"
      - port: "443"
  endpointSelector:
    matchLabels:
      app: myapp
```
"""

# https://github.com/cilium/cilium/issues/18900 (description): a toFQDNs rule and a DNS rule on port 53.
CILIUM_18900 = """```yaml
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: "fqdn-pprof"
  namespace: msp
spec:
  endpointSelector:
    matchLabels:
      app: pprof
  egress:
  - toFQDNs:
    - matchPattern: '*.baidu.com'
  - toPorts:
    - ports:
      - port: "53"
        protocol: ANY
      rules:
        dns:
        - matchPattern: '*'
```
"""

# https://github.com/cilium/cilium/issues/29212 (description): two Deployments and a CiliumNetworkPolicy with a
# `specs:` list, each after a comment banner; cut after the rule to kube-dns (no ports: all of them).
CILIUM_29212 = """```yaml

########### Client
apiVersion: apps/v1
kind: Deployment
metadata:
  name: client
spec:
  selector:
    matchLabels:
      app: client
  replicas: 1
  template:
    metadata:
      labels:
        app: client
    spec:
      containers:
      - name: client
        image: docker.io/wbitt/network-multitool
---
########### Server
apiVersion: apps/v1
kind: Deployment
metadata:
  name: server
spec:
  selector:
    matchLabels:
      app: server
  replicas: 3
  template:
    metadata:
      labels:
        app: server
    spec:
      containers:
      - name: server
        image: nginx:1.25.3
---
########### Network Policy
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: client-server-policy
specs:
  - endpointSelector:
      matchLabels:
        app: server
    ingress:
    - fromEndpoints:
      - matchLabels:
          app: client
    egress:
    - toEndpoints:
      - matchLabels:
          k8s-app: kube-dns
"""

# https://github.com/NVIDIA/nccl/issues/525 (description): a pod spec pasted without its object, a memory-backed
# emptyDir mounted at /dev/shm.
NCCL_525 = (" - a solution on the kubernetes side (override the 64mb allocated by docker by mounting a volume in "
            "memory):\n ```\nspec:\n  volumes:\n  - name: dshm\n    emptyDir:     \n        medium: Memory\n"
            "  containers:\n  - image:  image-name\n    volumeMounts:\n      - mountPath: /dev/shm\n"
            "        name: dshm\n```\n")


def _report(text: str) -> tuple[dict[str, object], dict[str, str]]:
    report = analyse(artifacts_from_text(text, "paste"))
    statuses = {f"{f.playbook}/{h.id}": h.status for f in report.findings for h in _every(f.hypotheses)}
    return report.facts, statuses


def _every(hypotheses: list[Any]) -> list[Any]:
    out: list[Any] = []
    for h in hypotheses:
        out += [h, *_every(getattr(h, "children", []) or [])]
    return out


@pytest.mark.parametrize(("paste", "expected"), [
    (MINIKUBE_17027, {"service.selector": "app=my-app,env=production,tier=front-end",
                      "service.selector_matches_pods": True, "service.target_ports": ["80"],
                      "pod.labels": ["app=my-app", "env=production", "tier=front-end"],
                      "container.image": "nginx"}),
    (CLICKVISUAL_414, {"service.target_ports": ["server", "governor"], "service.selector":
                       "app.kubernetes.io/instance=clickvisual,app.kubernetes.io/name=clickvisual"}),
    (KUBE_ROUTER_1617_DENY, {"netpol.dns_egress_blocked": True, "netpol.count": 1}),
    (KUBE_ROUTER_1617, {"netpol.dns_egress_blocked": False, "netpol.count": 2}),
    (AWS_NPC_146, {"netpol.dns_egress_blocked": False}),
    (AWS_NPA_230, {"netpol.dns_egress_blocked": False}),
    (CILIUM_31803, {"netpol.dns_egress_blocked": True, "netpol.count": 1}),
    (CILIUM_18900, {"netpol.dns_egress_blocked": False}),
    (CILIUM_29212, {"netpol.dns_egress_blocked": False, "netpol.count": 1,
                    "pod.labels": ["app=client", "app=server"]}),
    (NCCL_525, {"pod.shm_volume": True, "container.image": "image-name", "pod.shm_size_bytes": None}),
], ids=["minikube-17027", "clickvisual-414", "kube-router-1617-deny", "kube-router-1617", "aws-npc-146",
        "aws-npa-230", "cilium-31803", "cilium-18900", "cilium-29212", "nccl-525"])
def test_objects_in_real_wrappers_are_read_and_joined(paste: str, expected: dict[str, object]) -> None:
    facts, _ = _report(paste)
    assert {name: facts.get(name) for name in expected} == expected


def test_a_matching_selector_is_no_selector_fault() -> None:
    _, statuses = _report(MINIKUBE_17027)
    assert statuses.get("service-unreachable/selector-matches-nothing") not in ("confirmed", "likely")


def test_a_policy_that_lets_dns_out_makes_no_policy_hypothesis_likely() -> None:
    for paste in (AWS_NPC_146, CILIUM_18900, KUBE_ROUTER_1617):
        _, statuses = _report(paste)
        assert statuses.get("service-unreachable/network-policy") not in ("confirmed", "likely"), paste[:60]


def test_a_policy_with_no_dns_rule_makes_the_policy_hypothesis_likely() -> None:
    _, statuses = _report(CILIUM_31803)
    assert statuses["service-unreachable/network-policy"] == "likely"
