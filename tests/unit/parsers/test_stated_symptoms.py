"""A symptom said in a sentence runs its playbook: stated.yaml's `symptom:` entries, and the GPU-Util figure said in
words, weighed as stated (parser `stated:<entry>`, likely at most). Negation, questions, conditionals, history and
a symptom named as what a change avoids are not read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.text.stated import read_stated
from tests.unit.parsers.paste_facts import stated_facts

# Sentences built from each symptom's own vocabulary (the state names the programs print, and the plain words for
# the symptom); synthetic, so every entry is exercised the same way.
SAID = [
    ("the pod keeps restarting after the upgrade", "crash-loop"),
    ("our pod is stuck in a crash loop since yesterday", "crash-loop"),
    ("the pod is Pending for an hour now", "pending"),
    ("the worker pod was Evicted last night", "evicted"),
    ("the service returns 503s to every client", "error-rate"),
    ("our requests get lots of 502 from the ingress", "error-rate"),
    ("the p99 latency went from 200 ms to 2 s after the rollout", "latency"),
    ("requests are very slow since the upgrade", "latency"),
    ("we see increasing TTFT as the request rate grows", "latency"),
    ("the job hangs at the first allreduce on every run", "nccl-hang"),
    ("training is stuck in init_process_group on node 2", "nccl-hang"),
    ("the process was killed by the OOM killer again", "oom-killed"),
    ("the GPU usage fluctuates a lot during training", "gpu-underutilized"),
    ("the GPU utilization is low during the whole run", "gpu-underutilized"),
    ("our service is unreachable from the other namespace", "service-unreachable"),
    ("the gpu utility is very low during training", "gpu-underutilized"),  # a common spelling of GPU-Util
    ("we are still unable to fully utilize the GPUs", "gpu-underutilized"),
    ("the GPUs are not fully utilized during training", "gpu-underutilized"),
    ("the TTFT is very long on every first request", "latency"),
    ("the queue time is very high under load", "latency"),
    ("our requests spend a long time in the queue", "latency"),
    ("when I curl 10.96.14.2:8080 from node 3 it cannot connect", "service-unreachable"),
    ("curl -s http://web.shop.svc.cluster.local:80 from the client pod can't connect", "service-unreachable"),
]


@pytest.mark.parametrize(("sentence", "symptom"), SAID)
def test_a_symptom_said_in_words_is_read(sentence: str, symptom: str | None) -> None:
    got = stated_facts(sentence)
    assert got.get("symptoms", set()) == ({symptom} if symptom else set()), got


NOT_SAID = [
    "the pod is not restarting at all",
    "is the pod Pending?",
    "if the GPU util drops we restart the job",
    "the pod used to be Pending before we added a node",
    "to avoid OOMKilled we set a higher limit on the pod",
    "we never see 503s from the service",
    "does the job hang at the first allreduce?",
    "the node is not NotReady",
    "the GPU utilization is 100% on every card",
    "there are pending requests in the queue",  # no pod: a queue's pending is no pod phase
    "the training hangs when it loads the data",  # no collective named: not NCCL's hang
    "the service is reachable from every pod",
    "the connection was reset by the peer during the call",  # a generic error names nothing
    "we want to fully utilize the GPUs on every node",  # a goal, not a symptom
    "the GPUs are not underutilized at all",
    "if we see high latency we scale out the deployment",
    "is the TTFT too long for a 70B model?",
    "the TTFT is not long at all",
    "the queue time is low and stable",
    "why can't curl 10.96.14.2:8080 connect?",
    "if curl 10.96.14.2:8080 cannot connect, check kube-proxy",
    "curl example.com:443 cannot connect from the node",  # a public site: not a Service
    "curl 10.96.14.2:8080 can connect now",
]


@pytest.mark.parametrize("sentence", NOT_SAID)
def test_a_negated_asked_conditional_or_past_symptom_is_not_read(sentence: str) -> None:
    assert "symptoms" not in stated_facts(sentence), sentence


@pytest.mark.parametrize(("sentence", "figure"), [
    ("GPU utilization is always 0% on the node", 0.0),
    ("the GPU-util drops from 98% to 0-20% between batches", 0.0),
    ("the GPU util fluctuates between 0 and 100 during the epoch", 0.0),
    ("the GPU utilization stays at about 35% for the job", 35.0),
    ("the GPU usage is 100% but the CPU is at 5%", 100.0),  # the CPU's figure is not the GPU's
    ("the GPU util is 30% on 8 GPUs", 30.0),  # 8 is a count of GPUs, not a percentage
])
def test_the_gpu_util_figure_said_is_the_lowest_and_stated(sentence: str, figure: float) -> None:
    facts = read_stated(Artifact(id="p", kind=ArtifactKind.TEXT, source="paste", content=sentence)).facts
    got = [(f.value, f.parser) for f in facts if f.name == "gpu.job_util_percent"]
    assert got == [(figure, "stated:gpu-util-figure")]


# Verbatim sentences from public threads (whole lines), with the thread beside each.
REAL = [
    ("https://github.com/NVIDIA-NeMo/Speech/issues/1204",
     "And when I tried to verify the gpu usage, with nvidia-smi, the Memory-Usage is full but Volatile GPU-util "
     "indicates 0% ( in other words, it seems that the gpu doesn't work )",
     {"gpu.job_util_percent": 0.0}),
    ("https://github.com/tensorflow/models/issues/10803",
     "Start normal training. At a certain steps, the GPU utilization drops to 0. It is suspected that reading data "
     "is blocked. I don’t know if the suspicion is correct and how to deal with it.",  # noqa: RUF001
     {"symptoms": {"gpu-underutilized"}}),
    ("https://github.com/pytorch/pytorch/issues/140563",
     "I'm training a vqgan model and there is a forward operation which do allreduce across batch to get an "
     "estimation of the data distribution. It successfully ran for hours and hang in the allreduce operation. But "
     "it didn't throw any specific error. But still, the program will stuck after running for serveral hours at "
     "randomly batch. I cannot find out why. ",
     {"symptoms": {"nccl-hang"}}),
    ("https://github.com/NVIDIA/nccl/issues/257",
     "Using the `master` version of nccl. I launch `all_reduce_perf` and it hangs with 100% volatile GPU usage "
     "reported. ",
     {"symptoms": {"nccl-hang"}}),
    ("https://github.com/coder/coder/issues/11244",
     'Pod never gets "Ready" and keeps on restarting, eventually resulting in CrashLoopBackOff, when not using the '
     "config file located in the default location.",
     {"symptoms": {"crash-loop"}, "container.waiting.reason": "CrashLoopBackOff"}),
    ("https://github.com/llvm/llvm-zorg/pull/640",
     "We have been running into some cases where a pod will be stuck pending for 10+ hours. The buildbot should "
     "just bail if the pod can't schedule in 30 minutes rather than waiting so long. We also need to fix the "
     "underlying issue causing pods to not schedule, but it is good to be resilient to this case too.",
     {"symptoms": {"pending"}, "pod.phase": "Pending"}),
    ("https://github.com/DagnyT/hardnet/issues/19",
     "When I try to run the train code , I get a error : killed by OOM killer",
     {"symptoms": {"oom-killed"}}),
    # NotReady names no symptom (node-not-ready's trigger keeps its planned-shutdown guard): its fact runs it.
    ("https://github.com/kubernetes/kubernetes/issues/119438",
     "Sometimes nodes suddenly transition into NotReady and don't seem to work for no apparent reason. Within that "
     "time (about 10min last time) the kubelet does not log anything, but the kube-proxy logs `iptables "
     "ChainExists` a bunch of times, until the nodes back up.",
     {"node.conditions": ["NotReady"], "symptoms": None}),
    # Queue time said to grow long while the compute time stays flat: requests wait their turn (Triton).
    ("https://github.com/triton-inference-server/server/issues/3953",
     "We are using triton to deploy gpu service, the queue waiting time suddenly becomes very long，But the infer "  # noqa: RUF001
     "time is very stable（batchsize=1） ，The gpu usage and cpu usage of the gpu machine are normal，and qps did "  # noqa: RUF001
     "not rise.",
     {"symptoms": {"latency"}, "serving.requests_queued": True}),
    ("https://github.com/triton-inference-server/server/issues/8251",
     "Real latency is much higher, queue time is high",  # the title
     {"symptoms": {"latency"}, "serving.requests_queued": True}),
]


@pytest.mark.parametrize(("url", "text", "expected"), REAL, ids=[r[0] for r in REAL])
def test_a_real_sentence_states_its_symptom(url: str, text: str, expected: dict[str, object]) -> None:
    got = stated_facts(text)
    assert {k: got.get(k) for k in expected} == expected, url


REAL_NOT = [
    ("https://github.com/pytorch/pytorch/issues/140563",
     "1. it only occupies 10% GPU memory on each card thus it's impossible to oom"),
    ("https://github.com/NVIDIA/nccl/issues/306",
     "I found that tensorflow process gets stuck after training lasts almost 30 hours and this problem can be "
     "reproduced every time. The usages of all gpus are 100% when all processes hang up."),
    # Asked, and quoted in backticks: the writer asks about Pending, no pod of theirs is.
    ("https://github.com/kubernetes/website/issues/22085",
     "This portion of the [documentation](https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/"
     "#pod-lifetime) states what eventually happens to pods that are `Succeeded` or `Failed`, but what happens to "
     "pods that are stuck in `Pending`? It says things need to be manually cleaned up or cleaned up by the "
     "controller, but what is the default behavior of a pod that is in a `Pending` state and shows no sign of "
     "coming out of that state? Will it be `Pending` until you kill it yourself? Does it eventually become `Failed` "
     "after some period of time? Can it be configured to fail after some time if it never reaches the `Running` "
     "state?"),
    # What the writer expected, not what happened.
    ("https://github.com/kubernetes/kubernetes/issues/84891",
     "Restart kubelet and node will not become notready state"),
    # A conditional: "if P99 went up".
    ("https://github.com/dragonflydb/dragonfly/pull/5027",
     "As opposted to the cumulatative one that is shown at the end. The reason for this: if P99 went up "
     "temporarily - it does not go back easily and stays up."),
    # Asked about, in the title.
    ("https://github.com/triton-inference-server/server/issues/3416",
     "[Questions] Why is the queue time high?"),
]


@pytest.mark.parametrize(("url", "text"), REAL_NOT, ids=[r[0] for r in REAL_NOT])
def test_a_real_sentence_without_the_symptom_names_none(url: str, text: str) -> None:
    got = stated_facts(text)
    said = {"symptoms", "gpu.job_util_percent", "pod.phase", "node.conditions"} & set(got)
    assert not said, (url, got)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("gpu util usage 0123456789%-. pod keeps restarting hangs allreduce "
                                             "not is it ? NotReady Pending 503s p99 from to\n")), max_size=300))
def test_the_stated_reader_never_raises(text: str) -> None:
    result = read_stated(Artifact(id="p", kind=ArtifactKind.TEXT, source="paste", content=text))
    assert all(f.parser.startswith("stated:") for f in result.facts)
