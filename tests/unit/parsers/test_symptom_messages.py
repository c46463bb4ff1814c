"""Messages that show a symptom name it (`evidence.symptoms`, from a signal's `symptom:` in signals.yaml), on lines
real users pasted in public threads (generic errors, questions and messages that restart nothing name none:
test_names_nothing.py).

The upstream templates themselves are rendered and checked in test_k8s_wordings.py (their `expect` holds the
symptom); these are the same messages as people met them, cut at whole lines, with the thread beside each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact


@dataclass(frozen=True)
class Paste:
    id: str
    url: str
    text: str
    symptom: str
    facts: dict[str, Any] = field(default_factory=dict)


def _facts(text: str) -> dict[str, Any]:
    result = parse_artifact(Artifact(id="paste.txt", kind=ArtifactKind.TEXT, content=text))
    return {f.name: f.value for f in result.facts}


REAL = [
    Paste("gsp-rpc-timeout-525", "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/446",
          "[Fri Mar  3 04:27:08 2023] NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, name=nvidia-smi, Timeout waiting "
          "for RPC from GSP! Expected function 103 (GSP_RM_ALLOC) (0x80 0x38).",
          "gpu-xid", {"gpu.gsp_timeout": True, "xid.codes": [119]}),
    Paste("gsp-rpc-timeout-gpud-scan", "https://github.com/leptonai/gpud/pull/500",
          '[XID found] (54 minutes ago) "NVRM: Xid (PCI:0000:9b:00): 119, pid=4071838, name=python, Timeout after 45s '
          'of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801702 0x4)."',
          "gpu-xid", {"gpu.gsp_timeout": True}),
    Paste("nvidia-hook-driver-not-loaded", "https://github.com/NVIDIA/nvidia-docker/issues/1629",
          "`docker: Error response from daemon: failed to create shim: OCI runtime create failed: "
          "container_linux.go:380: "
          "starting container process caused: process_linux.go:545: container init caused: Running hook #0:: error "
          "running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: nvml "
          "error: driver "
          "not loaded: unknown.`",
          "crash-loop", {"gpu.container_hook_errors": ["other"]}),
    Paste("nvidia-hook-driver-rpc", "https://github.com/NVIDIA/nvidia-container-toolkit/issues/556",
          "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc "
          "create failed: "
          "unable to start container process: error during container init: error running hook #0: error running hook: "
          "exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
          "nvidia-container-cli: initialization error: driver rpc error: failed to process request: unknown.",
          "crash-loop", {"gpu.container_hook_errors": ["other"]}),
    Paste("runc-exec-stat-missing", "https://github.com/CyCoreSystems/asterisk-k8s-demo/pull/25",
          "`Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc "
          'create failed: unable to start container process: exec: "/app": stat /app: no such file or directory: '
          "unknown`",
          "crash-loop", {"app.errors": ["entrypoint"]}),
    Paste("runc-exec-empty-in-describe", "https://github.com/vdesabou/kafka-docker-playground/issues/8515",
          "      Message:      failed to create containerd task: failed to create shim task: OCI runtime create "
          "failed: runc create failed: unable to start container process: error during container init: exec: \"\": "
          "executable file not found in $PATH",
          "crash-loop", {"app.errors": ["entrypoint"]}),
    Paste("runc-1-0-exec-not-found", "https://github.com/containerd/rust-extensions/issues/183",
          "thread 'main' panicked at 'Failed to create task: Status { code: Unknown, message: \"OCI runtime create "
          "failed: container_linux.go:367: starting container process caused: exec: \\\"echo\\\": executable file "
          'not found in $PATH: unknown\", metadata: MetadataMap { headers: {\"content-type\": '
          '\"application/grpc\"} }, source: None }\', src/main.rs:104:42',
          "crash-loop", {"app.errors": ["entrypoint"]}),
    Paste("docker-inspect-oomkilled-in-prose", "https://github.com/moby/moby/issues/15621",
          "When I exit, I see `\"OOMKilled\": true,`. This is expected.",
          "oom-killed", {"kernel.oom_kill": True}),
    Paste("docker-hub-rate-limit", "https://github.com/huan/docker-wechat/issues/156",
          "Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may "
          "increase the limit "
          "by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
          "image-pull", {"image.pull_error": "rate-limited"}),
    Paste("docker-hub-rate-exceeded-in-json", "https://github.com/zebrunner/mcloud-agent/issues/235",
          '    "stderr": "Error response from daemon: toomanyrequests: Rate exceeded",',
          "image-pull", {"image.pull_error": "rate-limited"}),
    Paste("docker-pull-access-denied-namespaced", "https://github.com/harsh-bothra/Bheem/issues/35",
          "Error response from daemon: pull access denied for xavier99909/hacktools_bheem, repository does not "
          "exist or "
          "may require 'docker login': denied: requested access to the resource is denied",
          "image-pull", {"image.pull_error": "denied-or-missing"}),
    Paste("kubelet-pull-access-denied-library", "https://github.com/kubernetes/minikube/issues/20613",
          'Failed to pull image "suedostcargo-web": Error response from daemon: pull access denied for '
          'suedostcargo-web, '
          "repository does not exist or may require 'docker login': denied: requested access to the resource is denied",
          "image-pull", {"image.pull_error": "denied-or-missing", "image.library_repository": True}),
    # The OCI distribution API's codes as the registry answered them, relayed by a client that was pulling.
    Paste("registry-manifest-unknown-api-error", "https://github.com/fsouza/go-dockerclient/issues/488",
          "API error (500): manifest unknown: manifest unknown",
          "image-pull", {"image.pull_error": "not-found"}),
    Paste("registry-name-unknown-podman", "https://github.com/containers/shortnames/pull/21",
          "Trying to pull registry.access.redhat.com/ubi8-micro:latest...\n"
          "  name unknown: Repo not found\n"
          "Error: Error initializing source docker://registry.access.redhat.com/ubi8-micro:latest: Error reading "
          "manifest latest in registry.access.redhat.com/ubi8-micro: name unknown: Repo not found",
          "image-pull", {"image.pull_error": "not-found"}),
    Paste("kubelet-1-3-eviction-event-in-log", "https://github.com/kubernetes/kubernetes/issues/30550",
          'I0818 03:35:27.856536    2658 server.go:680] Event(api.ObjectReference{Kind:"Pod", '
          'Namespace:"e2e-tests-density-test-43bif", Name:"cadvisor", UID:"ce5092e5-64f4-11e6-b1e0-42010a800007", '
          "APIVersion:\"v1\", ResourceVersion:\"469\", FieldPath:\"\"}): type: 'Warning' reason: 'Evicted' The node "
          "was low on compute resources.",
          "evicted", {"eviction.seen": True}),
    Paste("kubelet-node-status-retries-exhausted", "https://github.com/kubernetes/kubernetes/issues/75607",
          "Mar 22 17:40:16 ip-172-20-47-6 kubelet[1272]: E0322 17:40:16.948429    1272 kubelet_node_status.go:382] "
          "Unable to update node status: update node status exceeds retry count",
          "node-not-ready", {"node.not_ready_reasons": ["kubelet-stopped-posting"]}),
    Paste("kubelet-failed-to-run-cgroup-driver", "https://github.com/kubernetes/kubelet/issues/9",
          "Apr 05 05:33:40 master kubelet[4759]: F0405 05:33:40.511159    4759 server.go:274] failed to run Kubelet: "
          'misconfiguration: kubelet cgroup driver: "cgroupfs" is different from docker cgroup driver: "systemd"',
          "node-not-ready", {"node.not_ready_reasons": ["kubelet-stopped-posting"]}),
    Paste("kubelet-skipping-sync-runtime-down", "https://github.com/kubernetes/website/issues/8030",
          "Apr 09 21:14:19 k8s-node1 kubelet[26014]: I0409 21:14:19.210702   26014 kubelet.go:1794] skipping pod "
          "synchronization - [container runtime is down]",
          "node-not-ready", {"node.not_ready_reasons": ["runtime-down"]}),
    Paste("describe-node-unreachable-taint", "https://github.com/kubernetes/kubernetes/issues/77981",
          "Taints:             node.kubernetes.io/unreachable:NoSchedule",
          "node-not-ready", {"node.conditions": ["NotReady"]}),
    Paste("describe-node-alpha-unreachable-taint", "https://github.com/kubernetes/kubernetes/issues/42733",
          "Taints:\t\t\tnode.alpha.kubernetes.io/unreachable:NoExecute",
          "node-not-ready", {"node.conditions": ["NotReady"]}),
    Paste("liveness-probe-glog", "https://github.com/kubernetes/kubernetes/issues/67180",
          'Liveness probe for "basecore-iapi-xlobo-com-5b9ff9c65d-plj4d_ymt-pro(344ce7ef-9afc-11e8-bf1e-9457a56b2f81)'
          ':basecore-iapi-xlobo-com" failed (failure): Get http://10.200.109.68:6766/warmup: net/http: request '
          'canceled '
          "(Client.Timeout exceeded while awaiting headers)",
          "crash-loop", {"probe.failures": ["liveness"]}),
    Paste("liveness-probe-event-columns", "https://github.com/inspektor-gadget/inspektor-gadget/pull/187",
          "2021-07-01T13:58:33Z   Unhealthy   Liveness probe failed: \n"
          "2021-07-01T13:58:49Z   Unhealthy   Liveness probe failed: ",
          "crash-loop", {"probe.failures": ["liveness"]}),
]


@pytest.mark.parametrize("paste", REAL, ids=lambda p: p.id)
def test_a_real_message_names_its_symptom(paste: Paste) -> None:
    facts = _facts(paste.text)
    assert paste.symptom in facts.get("evidence.symptoms", []), facts
    for name, want in paste.facts.items():
        got = facts.get(name)
        assert (all(w in got for w in want) if isinstance(want, list) and isinstance(got, list) else got == want), \
            (name, got)
