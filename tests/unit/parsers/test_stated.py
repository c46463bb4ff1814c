"""Stated observations (collectors/parsers/text/stated.py): terms of art in the sentences people write.

Real sentences, verbatim from the thread named beside each; the catalog tests render every term of
collectors/catalogs/stated.yaml in a sentence, negated, and asked about.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.catalogs.stated import stated_terms
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from collectors.parsers.text.stated import read_stated
from collectors.paste import artifacts_from_text

REAL: list[tuple[str, str, dict[str, Any]]] = [
    ("https://github.com/kubernetes/kubernetes/issues/98157",
     "If the pod exceeds the memory limit and is oomkilled, executing any command in the pod will cause the pod to "
     "oomkilled continuously, even if the memory does not exceed the upper limit.",
     {"container.last_terminated.reason": "OOMKilled"}),
    ("https://github.com/cloudnative-pg/cloudnative-pg/issues/4946",
     "Recently we started facing issue that all cnpg clusters running on a node restarts at same time for no reason "
     "and these restarted are happening randomly. Upon debugging postgres container it was terminated with Exit "
     "Code 137.",
     {"container.last_terminated.exit_code": 137}),
    ("https://github.com/kubernetes/kubernetes/issues/77924",
     "Hey, All friends, my pod is exit with code 137 when i connect mysql in this pod.",
     {"container.last_terminated.exit_code": 137}),
    ("https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507",
     "You’re getting a XID 79, fallen off the bus. Most common reasons for this issue are overheating or lack of "  # noqa: RUF001
     "power or outdated SBIOS.",
     {"xid.codes": [79]}),
    ("https://github.com/rancher/rke2/issues/4833",
     "node1 is stuck at NotReady and the rke2 doesnt come up",
     {"node.conditions": ["NotReady"]}),
    ("https://github.com/kubesphere/kubesphere/issues/4502",
     "And when I check the nodes, I find all nodes are NotReady!!! Nothing running properly.",
     {"node.conditions": ["NotReady"]}),
    ("https://github.com/kubernetes/kubernetes/issues/102026",
     "3.When I forcibly shut down three worker nodes, all workers are in NotReady state. However, there may be one "
     "or two pods whose status is always running.",
     {"node.conditions": ["NotReady"]}),
    ("https://github.com/rancher/rancher/issues/5559",
     "I would deploy my service and then shortly afterwards, I would deploy the ingress but when I tried accessing "
     "my service through the browser, I kept getting 503 from the Rancher load balancer.",
     {"http.error_statuses": [503]}),
    ("https://github.com/kubernetes/ingress-nginx/issues/3590",
     "Hi guys, I'm trying to get an ingress to work but am always just getting 503 back when browsing to the URL.",
     {"http.error_statuses": [503]}),
    ("https://github.com/justmeandopensource/kubernetes/issues/60",
     "When I input http://nginx.example.com/ into my browser, I get error 503 Service Unavailable - No server is "
     "available to handle this request.",
     {"http.error_statuses": [503]}),
    # Model-server latency and errors as people say them (issue 24).
    ("https://github.com/vllm-project/vllm/pull/8378",
     "Seems that requests just stack up in pending after a few get through. I get 3 completions then it just hangs",
     {"serving.requests_queued": True, "evidence.symptoms": ["latency"]}),
    ("https://github.com/vllm-project/vllm/issues/8086",
     "I compared it with transformers when ten requests were sent concurrently.vLLM TTFT increased from 2s to 17s, and "
     "there was no obvious difference between transformers and single request.",
     {"evidence.symptoms": ["latency"]}),
    ("https://github.com/zan-mateusz/new-tf-repo-1/issues/67",
     "Automatically created issue due to high server error rate.",
     {"evidence.symptoms": ["error-rate"]}),
]

# Real sentences that state none of the terms: a question about an exit code, an error code that is no exit code.
NOTHING: list[tuple[str, str]] = [
    ("https://github.com/pdreker/fritz_exporter/issues/674", "Anyone knows what error code 137 means?"),
    ("https://github.com/web3labs/blk-explorer-free/issues/10",
     "Is there information somewhere what code 137 is caused by?"),
    ("https://github.com/vllm-project/vllm/issues/17598",
     "**Why do both ITL and TPOT increase when `max-num-seqs` increases under the same request rate?**"),
    ("https://github.com/vllm-project/vllm/issues/4760", "Why I've got low speed?:"),
    ("https://github.com/NVIDIA/NVSentinel/issues/155",
     "We have seen some cases in our on-prem fleet where we the following logs are printed in dmesg that are not "
     "linked to an XID:"),
]


def _paste(text: str) -> Artifact:
    return Artifact(id="p", kind=ArtifactKind.TEXT, source="paste", content=text)


def _stated(text: str) -> dict[str, Any]:
    result = parse_artifact(_paste(text))
    return {f.name: f.value for f in result.facts if f.parser.startswith("stated:")}


@pytest.mark.parametrize(("url", "text", "expected"), REAL, ids=[u.rsplit("/", 3)[-3] + "-" + u.rsplit("/", 1)[-1]
                                                                  for u, _, _ in REAL])
def test_a_real_sentence_is_read_as_stated(url: str, text: str, expected: dict[str, Any]) -> None:
    got = _stated(text)
    for name, value in expected.items():
        assert got.get(name) == value, (url, got)


@pytest.mark.parametrize(("url", "text"), NOTHING, ids=[u.rsplit("/", 1)[-1] for u, _ in NOTHING])
def test_a_real_sentence_that_states_no_term_gives_nothing(url: str, text: str) -> None:
    assert _stated(text) == {}, url


def _sample(term: Any) -> tuple[str, object]:
    """A term as a person writes it, and the value it must give."""
    if term.spec.id == "eviction-resource":  # read only in a sentence about an eviction
        return "hit by an eviction for ephemeral-storage", "ephemeral-storage"
    if term.spec.terms:
        return term.spec.terms[0], term.spec.terms[0]
    samples = {"exit-code": ("exit code 137", 137), "xid": ("Xid 79", 79), "http-5xx": ("returns 503", 503),
               "http-5xx-errors": ("there are often some 502 errors", 502),
               "nccl-watchdog": ("NCCL watchdog timed out", True), "restarting": ("keeps restarting", ["crash-loop"]),
               "oom-killer": ("killed by the OOM killer", ["oom-killed"]), "gpu-util-figure": ("GPU util 5%", 5.0),
               "gpu-util-low": ("low GPU utilization", ["gpu-underutilized"]),
               "gpu-util-bare-figure": ("GPU util 5", 5.0), "nvidia-smi-util-figure": ("nvidia-smi usage 5%", 5.0),
               "gpu-util-swings": ("GPU usage oscillating", True),
               "nvidia-smi-util-swings": ("nvidia-smi readings fluctuating between 0 and 80%", True),
               "job-running": ("a snapshot during training", True),
               "one-gpu-used": ("only one of the GPUs used", ["gpu-underutilized"]),
               "input-said-slow": ("waiting for data loading", True),
               "latency-up": ("p99 latency went up", ["latency"]),
               "collective-hang": ("hanging in allreduce", ["nccl-hang"]),
               "service-unreachable": ("service is unreachable", ["service-unreachable"]),
               "error-rate-up": ("seeing a high 5xx error rate", ["error-rate"]),
               "requests-queued": ("full of requests waiting in the queue", True),
               "generation-slow": ("slow with low generation throughput", ["latency"]),
               "latency-figure": ("slow with p99 latency of 2s", ["latency"]),
               "gpu-named-util-figure": ("on the V100 the utilization at 5%", 5.0),
               "gpu-named-util-swings": ("on the A100 the utilization fluctuating", True),
               "gpu-util-varies-from-zero": ("with GPU usage that becomes 0 every few seconds", True),
               "gpu-util-rises-and-falls": ("with GPU utilization ratio changing ups and downs", True),
               "gpu-util-zero-periodically": ("pausing every 20 iterations where GPU usage went back to 0", True),
               "gpu-board-util-figure": ("at GPU (V100) usage of 5%", 5.0),
               "pull-rate-limited": ("rate-limited pulling its image", "rate-limited"),
               "oom-verb": ("OOMing in its container", "OOMKilled"),
               "limit-said-too-low": ("under memory limits that are too small", True),
               "latency-increase-noun": ("hit by an increase in p99 latency", ["latency"]),
               "service-address-failing": ("getting timeouts to the ClusterIP", ["service-unreachable"]),
               "gpu-named-util-drops": ("on the A100 where the utilization drops", ["gpu-underutilized"]),
               "target-port-mismatch": ("behind a target port of 8000 while the container listens on 80", "8000"),
               "job-ran": ("proof that we ran the training job successfully", True),
               "curl-cluster-address-cannot-connect": ("seeing curl 10.96.14.2:8080 that cannot connect",
                                                       ["service-unreachable"]),
               "scaling-said-slower": ("slower than on a single node", True),
               "gpu-share-used-figure": ("using only 5% of the GPU", 5.0),
               "gpu-util-of-figure": ("at a usage of GPU of 5%", 5.0),
               "scheduling-insufficient-memory": ("unschedulable due to insufficient memory", "insufficient-memory"),
               "scheduling-insufficient-cpu": ("unschedulable due to not enough cpu", "insufficient-cpu"),
               "limit-said-lowered": ("killed after reducing the memory limit to 500Mi", True),
               "endpoints-said-empty": ("behind a Service with no ready endpoints", 0),
               "liveness-kill-said": ("killed by the liveness probe", True),
               "mtu-mismatch-said": ("hit by an MTU mismatch", True),
               "scheduling-too-many-pods": ("unschedulable due to too many pods", "too-many-pods"),
               "dns-lookup-seconds": ("hit by DNS lookups that take 5 seconds", 5.0),
               "clocks-event-sw-power-cap": ("throttled by SW Power Cap", "power"),
               "clocks-event-hw-slowdown": ("throttled by HW Slowdown", "hw-slowdown"),
               "clocks-event-sw-thermal-slowdown": ("throttled by SW Thermal Slowdown", "sw-thermal"),
               "clocks-event-hw-thermal-slowdown": ("throttled by HW Thermal Slowdown", "thermal"),
               "clocks-event-hw-power-brake-slowdown": ("throttled by HW Power Brake Slowdown", "power-brake"),
               "nvlink-fault": ("hit by a fatal NVLink error", ["gpu-xid"]),
               "gpu-sharing-time-slicing": ("on a GPU time-sliced into replicas", "time-slicing"),
               "gpu-sharing-mps": ("on a GPU with MPS enabled", "mps"),
               "scaling-said-flat": ("at a throughput that stays the same regardless of the number of GPUs", True),
               "collectives-said-differ": ("issuing mismatched collectives", True),
               "gpu-util-figure-first": ("at 5% GPU utilization", 5.0),
               "batch-said-small": ("run with batch size 1", True),
               "probe-restarts-container": ("killed as its liveness probe kills the container", True),
               "gpu-shared-by-processes-slower": ("slowed down by two other processes on the same GPU", "processes"),
               "gpu-second-copy-per-item-time": ("running a second copy of it where each takes 10 ms per image on "
                                                 "the GPU", "processes"),
               "nccl-shm-no-space": ("failing in the NCCL all-reduce with No space left on device in shared memory",
                                     "no-space"),
               "exit-code-bare": ("restarting with exit 137", 137),
               "system-oom-said": ("killed by SystemOOM", True),
               # fix round f9
               "scheduling-cpu-request-too-high": ("given CPU requests too high for any node", "insufficient-cpu"),
               "scheduling-memory-request-too-high": ("given memory requests too high for any node",
                                                      "insufficient-memory"),
               "eviction-disk-cause-said": ("hit by an eviction due to low disk space", "disk"),
               "eviction-memory-cause-said": ("hit by an eviction due to low memory", "memory"),
               "node-ran-out-of-memory-said": ("slow where the node ran out of memory", "MemoryPressure"),
               "named-node-ran-out-of-memory-said": ("on gke-pool-1-abc which ran out of memory", "MemoryPressure"),
               "selector-said-not-matching": ("behind a Service whose selector does not match the pod labels", False),
               "large-payloads-stall-said": ("serving large responses that stall", True),
               "service-said-hangs": ("seen when reaching the service that hung", ["service-unreachable"]),
               "port-said-not-listened": ("in a container that does not listen on 8080 but listens on 3000", True),
               # fix round 17
               "podgroup-waiting-said": ("in a podgroup still Inqueue", True),
               "scheduling-untolerated-taint-said": ("unschedulable because of missing tolerations",
                                                     "untolerated-taint"),
               # round 17
               "dns-said-slow": ("hit by slow DNS lookups", True),
               "latency-figure-against-usual": ("hit by a method taking 120s instead of the usual 0.1 s", ["latency"]),
               "extra-process-said-slows": ("on a GPU where an extra process slows the training", "processes"),
               # fix round 17 (g1)
               "proxy-rules-said-missing": ("missing all of the service rules", True),
               "netpol-said-drops": ("cut off as the NetworkPolicy drops its traffic", True),
               "rollout-said": ("failing after the rollout", True),
               "http-5xx-spike": ("behind a spike in 503s", 503),
               "request-said-timing-out-at": ("serving requests timing out after 60 seconds", "timeout"),
               # round 18 (h3)
               "config-said-cause": ("restarting because DATABASE_URL is not set", "config"),
               # fix round 18 (h2)
               "endpoints-said-scaled-to-zero": ("behind a deployment that was scaled down to 0 replicas", 0),
               # round 18 (h1)
               "gpu-oom-said": ("failing with a GPU OOM", True),
               # fix round 19 (i1)
               "proxy-restart-said-fixes": ("reachable after restarting kube-proxy", True),
               "dns-egress-said-blocked": ("blocked from reaching kube-dns", True),
               # round 19 (i4)
               "memory-leak-said": ("crashing due to a memory leak", True),
               "oom-at-memory-limit-said": ("killed when it reaches its memory limit", True),
               "autoscaler-drain-said": ("drained by the cluster autoscaler", True),
               # round 19 (i2)
               "http-5xx-as-result": ("behind a proxy that answers each request → 502,", 502),
               # round 19 (i3)
               "gpu-subject-figure": ("running with the GPU only at about 20%", 20.0),
               "gpu-said-not-run-full": ("one whose GPU barely works", "gpu-underutilized"),
               "gpu-idle-between-steps": ("leaving the GPU idle between iterations", True),
               "input-step-said-bottleneck": ("stuck on an image decoding bottleneck", True),
               "rank-said-skips-collective": ("one whose rank 0 skips the barrier", True),
               # round 20 (j1)
               "pleg-said-unhealthy": ("stuck where PLEG timed out", "pleg-unhealthy")}
    return samples[term.spec.id]


# An entry that reads a denial itself ("it is not OOM killed") is tested on its own below.
_DENIALS = {"not-oom-killer"}
# An entry whose words hold an earlier entry's term (pending-persisting-said: "stuck in Pending" holds pod-pending's
# Pending, which the sentence's "pod" lets read first) is tested in sentences without it
# (test_stated_f9_prose.py: read, denied, asked).
_SHADOWED = {"pending-persisting-said"}
_AFFIRMED = [t for t in stated_terms() if t.spec.id not in _DENIALS | _SHADOWED]


@pytest.mark.parametrize("term", _AFFIRMED, ids=[t.spec.id for t in _AFFIRMED])
def test_every_catalog_entry_is_read_in_a_sentence_and_not_when_negated_or_asked(term: Any) -> None:
    words, value = _sample(term)
    named = [term.spec.fact] if term.spec.fact else []
    named += ["evidence.symptoms"] if term.spec.symptom else []
    said = read_stated(_paste(f"Since the upgrade we see that the job's pod on the node is {words} on every run."))
    assert [(f.name, f.parser) for f in said.facts] == [(name, f"stated:{term.spec.id}") for name in named]
    assert said.facts[0].value in (value, [value])
    for sentence in (f"We checked and it is not {words} on this run.", f"Could it be that the job is {words}?",
                     f"We see the job failing instead of {words} this time."):
        assert [f for f in read_stated(_paste(sentence)).facts
                if f.parser.removeprefix("stated:") not in _DENIALS] == [], sentence


def test_spelt_in_words_reads_the_term() -> None:
    got = {f.value for f in read_stated(_paste("The pod keeps getting OOM-killed and goes into crash loop backoff "
                                               "again.")).facts}
    assert got == {"OOMKilled", "CrashLoopBackOff"}


def test_an_issue_template_field_holds_a_sentence_but_a_describe_field_does_not() -> None:
    said = read_stated(_paste("**What happened**: the training pod is OOMKilled every hour since Monday."))
    assert [f.value for f in said.facts] == ["OOMKilled"]
    assert read_stated(_paste("Reason:       OOMKilled")).facts == []


def test_program_output_is_left_to_its_reader() -> None:
    # A describe field is a program's line, and a fenced block is quoted output: neither is a statement.
    assert _stated("    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n") == {}
    assert read_stated(_paste("```\nthe pod is OOMKilled again and again\n```")).facts == []


def test_a_signal_read_from_a_sentence_is_stated_and_from_a_question_dropped() -> None:
    facts = parse_artifact(_paste("We also see Xid 79 in dmesg on that node.")).facts
    assert {f.name for f in facts} >= {"xid.codes"}
    assert all(f.parser.startswith("stated:") for f in facts if f.name == "xid.codes")
    asked = parse_artifact(_paste("Is it ImagePullBackOff in the end?")).facts
    assert [f.name for f in asked] == []


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_never_raises_on_garbage(text: str) -> None:
    result = read_stated(_paste(text))
    assert all(f.parser.startswith("stated:") for f in result.facts)


def test_a_message_quoted_in_a_sentence_stays_observed_and_a_negated_one_is_dropped() -> None:
    # Rule tests (made-up sentences): a program's message in inline code is shown, not said.
    quoted = parse_artifact(_paste("After the upgrade every GPU pod gets `0/3 nodes are available: 3 Insufficient "
                                   "nvidia.com/gpu.` from the scheduler.")).facts
    reasons = [f for f in quoted if f.name == "scheduling.reasons"]
    assert reasons and not any(f.parser.startswith("stated:") for f in reasons)
    denied = parse_artifact(_paste("We checked the node and there is no Xid 79 in dmesg at all.")).facts
    assert [f.name for f in denied if f.name.startswith("xid.")] == []


@pytest.mark.parametrize("line", [
    # Rule tests (made-up lines in the shapes programs print): however sentence-like, these are output.
    "torch.cuda.OutOfMemoryError: CUDA out of memory. The pod is OOMKilled after this in the job.",
    "  Warning  BackOff  3m  kubelet  the container is in CrashLoopBackOff and it restarts",
    "node5:240:240 [6] misc/socket.cc:533 NCCL WARN the watchdog timed out on this rank",
])
def test_a_program_line_is_not_a_sentence(line: str) -> None:
    assert read_stated(_paste(line)).facts == []


def test_notready_is_read_for_a_node_not_for_a_pod() -> None:
    # Rule test: NotReady is a state of pods and containers too; only a sentence about a node gives the condition.
    # (The rollout it names is read: rollout-said.)
    assert [f for f in read_stated(_paste("Two of the pods are stuck in NotReady after the rollout.")).facts
            if f.name == "node.conditions"] == []
    assert [f.value for f in read_stated(_paste("The worker is NotReady since the reboot.")).facts] == [["NotReady"]]


# Pulls throttled by the registry, said in words (stated.yaml pull-rate-limited).
THROTTLED = [
    # https://github.com/kubernetes/kubernetes/issues/103643 (the issue's title)
    ("Pods in CreateContainerConfigError keep pulling image / exceed docker hub rate limit", "rate-limited"),
    # https://github.com/kubernetes/kubernetes/issues/103643 (the same thread: what the reporter expected instead)
    ("I would expect the pod to crash loop backoff on CreateContainerConfigError and therefore does not exceed docker "
     "hub rate limit.", None),
    # A limit stated is not a pull throttled; throttling of something other than a pull is not a pull error.
    ("Docker Hub's rate limit is 100 pulls per 6 hours for anonymous users.", None),
    ("Our CI jobs are rate-limited by the GitHub API after a few hundred calls.", None),
    ("Is the image pull rate-limited by nvcr.io?", None),
]


@pytest.mark.parametrize("text", [
    # prometheus/prometheus#5727 (https://github.com/prometheus/prometheus/issues/5727), the issue's answer.
    "Exit Code is 137 and it is not OOM killed.",
    # podman#10825 (https://github.com/podman-container-tools/podman/issues/10825), a comment's prose line.
    "Hi. I'm not immediately sure if this is related but I am running a set of gitlab self hosted runners in Google "
    "cloud and am seeing my gitlab container scanning jobs exit regularly with exit code 137 despite there being no "
    "obvious memory constraint on the systems and no invocations of oom-killer in the syslog output.",
])
def test_a_kill_said_not_to_be_the_oom_killer_s_is_read(text: str) -> None:
    got = _stated(text)
    assert got["container.not_oom_killed"] is True
    assert got["container.last_terminated.exit_code"] == 137


@pytest.mark.parametrize("text", ["The pod was OOM killed again after the upgrade.",
                                  "We see the oom-killer killed the worker on every run.",
                                  "Is it not OOM killed then?"])
def test_an_oom_kill_said_or_asked_about_is_no_denial(text: str) -> None:
    # Rule tests (made-up sentences): only a denial the writer states rules the OOM killer out.
    assert "container.not_oom_killed" not in _stated(text)


# "OOM" as a verb of a pod's or container's kill, not asked, not negated (stated.yaml oom-verb).
OOM_VERB = [
    # Rule sentences (the real one, linode/apl-core#3600, is a case in tests/realworld/oom-killed).
    ("The ingester container OOMs every time it replays the WAL.", "OOMKilled"),
    ("Our worker pod OOMed twice last night.", "OOMKilled"),
    ("The ingester pod will OOM again within the hour.", "OOMKilled"),
    ("After the upgrade the container started to OOM.", "OOMKilled"),
    ("Will the pod OOM with this limit?", None),
    ("Seems those worker pods failed due to OOM.", None),  # the noun after "due to", not the verb
    ("The pod will not OOM with the new limit.", None),
    # No pod, container, process or worker named: a model or a GPU running out is no container kill.
    ("The model OOMs on the GPU with batch size 64.", None),
    ("Did the pod get OOMed?", None),
    ("The pod never OOMed after we raised the limit.", None),
]


# A container's limits said to be too small (stated.yaml limit-said-too-low).
LIMIT_SAID = [
    # Rule sentences (the real one, opf/helm-charts#136, is a case in tests/realworld/oom-killed).
    ("The memory limit of the worker pod is too low for the model.", True),
    ("We set too small a memory limit on the container.", True),
    # The CPU's limits, a limit said to be fine, a question, a negation: nothing.
    ("The CPU limits of the pod are too low and latency is bad.", None),
    ("The memory limit of the pod is fine.", None),
    ("Is the memory limit of the container too low?", None),
    ("The memory limit of the container is not too low.", None),
]


# A 5xx status said first and its verb after it (stated.yaml http-5xx-errors): rule sentences.
FIVE_XX_THEN_VERB = [
    ("Under load we see transient 503 returned to the clients.", [503]),
    ("Since the upgrade 502s are being served to some users.", [502]),
    ("Was a 503 returned to the client?", None),  # asked
    ("The 504 was not returned by the proxy.", None),  # negated
]


def _said(fact: str, cases: Sequence[tuple[str, object]]) -> list[tuple[str, str, object]]:
    return [(text, fact, value) for text, value in cases]


# (sentence, the fact, its value; None: not read)
SAID: list[tuple[str, str, object]] = [
    *_said("image.pull_error", THROTTLED),
    *_said("container.last_terminated.reason", OOM_VERB),
    *_said("memory.limit_said_too_low", LIMIT_SAID),
    *_said("http.error_statuses", FIVE_XX_THEN_VERB),
]


@pytest.mark.parametrize(("text", "fact", "value"), SAID)
def test_a_fact_said_in_a_sentence_is_read_and_asked_or_denied_is_not(text: str, fact: str, value: object) -> None:
    assert _stated(text).get(fact) == value


# https://github.com/artifact-keeper/artifact-keeper-iac/issues/153 (the issue's body), verbatim: the kubelet's
# eviction message alone in a markdown fence, between the writer's sentences. The fence shows it as the program
# printed it; unwrap turns the fence lines blank, and the artifact keeps where the fence was (Artifact.fenced).
FENCED_EVICTION = """\
The backend streams artifacts to the `/data/storage` emptyDir as temp files before finalizing, so the pod's \
writable usage tracks the full upload size.

```
Pod ephemeral local storage usage exceeds the total limit of containers 1Gi
```

The client sees a TLS EOF mid-stream and the backend logs nothing (the pod was killed before the write completed).
"""


def _pasted_facts(text: str) -> list[Any]:
    return [f for a in artifacts_from_text(text, "paste") for f in parse_artifact(a).facts]


def test_a_program_message_inside_a_fence_is_shown_and_outside_one_is_said() -> None:
    fenced = [f for f in _pasted_facts(FENCED_EVICTION) if f.name.startswith("eviction.")]
    assert {f.name for f in fenced} >= {"eviction.seen", "eviction.over_limit"}
    assert not any(f.parser.startswith("stated:") for f in fenced), fenced
    # Rule test: the same words with the fence taken away read as the writer's sentence.
    bare = [f for f in _pasted_facts(FENCED_EVICTION.replace("```\n", "")) if f.name.startswith("eviction.")]
    assert bare and all(f.parser.startswith("stated:") for f in bare), bare


# A name lookup said to take seconds (stated.yaml dns-lookup-seconds), verbatim from public threads.
DNS_SECONDS = [
    # https://github.com/kubernetes/kubernetes/issues/62628 (description, "What happened")
    ("The DNS will get a 5s latency of AAAA when uses iptables forward in network traffic between pods.", 5.0),
    # https://github.com/kubernetes/kubernetes/issues/62628 (the issue's title)
    ("DNS latency of 5s when uses iptables forward in pods network traffic", 5.0),
    # https://github.com/kubernetes/kubernetes/issues/56903 (the issue's title)
    ("DNS intermittent delays of 5s", 5.0),
    # https://github.com/julioct/azure-pipelines-kubernetes-agents/pull/3 (the pull request's title)
    ("Fix for 5 second DNS lookups", 5.0),
]
# Seconds that are no lookup's duration, and a lookup's delay denied (made-up sentences, rule tests).
DNS_NOT_SECONDS = [
    "The DNS TTL is 30 seconds for this record in our zone.",
    "CoreDNS reloads its Corefile every 30 seconds when the ConfigMap changes.",
    "There is no 5s latency on DNS in the pods after the fix.",
    "Is the DNS getting a 5s latency in the pods on that node?",
]


@pytest.mark.parametrize(("text", "seconds"), DNS_SECONDS)
def test_a_lookup_said_to_take_seconds_is_read(text: str, seconds: float) -> None:
    assert [(f.name, f.value) for f in read_stated(_paste(text)).facts] == [("dns.lookup_seconds", seconds)]


@pytest.mark.parametrize("text", DNS_NOT_SECONDS)
def test_seconds_that_are_no_lookup_or_denied_are_not_read(text: str) -> None:
    assert [f for f in read_stated(_paste(text)).facts if f.name == "dns.lookup_seconds"] == []
