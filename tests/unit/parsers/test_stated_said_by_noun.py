"""Symptoms said in a sentence by their nouns and figures (stated.yaml, issue 24 round 7): a rise in latency named
as a noun, a latency of seconds said in words, a client failure said of a Service's address, "the utilization" of
a GPU said to drop, a Service's targetPort said to differ from the port its container listens on; and a term set
off in quotes on its own ("the pod is in `CrashLoopBackOff`"), which is the writer's word, not a quoted message.
Each with its negated, asked, healthy and past forms."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from tests.unit.parsers.paste_facts import joined_facts, stated_facts

# Synthetic sentences built from each entry's vocabulary, so every alternative is exercised the same way.
SAID = [
    ("we noticed a large increase in p95, p99, p99.9 latency after the rollout", "latency"),
    ("there was a big jump in tail latency once the sidecars were injected", "latency"),
    ("we see a spike in response times every evening", "latency"),
    ("the p99 latency is on the order of seconds since the upgrade", "latency"),
    ("our p99 latency is several seconds for every request", "latency"),
    ("pods see intermittent timeouts to the `default/kubernetes` ClusterIP", "service-unreachable"),
    ("we get connection refused on the NodePort from outside the cluster", "service-unreachable"),
    ("the app times out connecting to redis.cache.svc.cluster.local every few minutes", "service-unreachable"),
    ("With more GPUs, the utilization drops to around 60% for every run", "gpu-underutilized"),
    ("on the A100 the utilization falls to 10% after the first epoch", "gpu-underutilized"),
]


@pytest.mark.parametrize(("sentence", "symptom"), SAID)
def test_a_symptom_said_by_its_noun_is_read(sentence: str, symptom: str) -> None:
    assert stated_facts(sentence).get("symptoms") == {symptom}


# Negatives for every new entry: a question, a negation, a healthy figure, a past fix, a generic error.
NOT_SAID = [
    "did you see an increase in p99 latency after the upgrade?",
    "we saw no increase in p95, p99 latency after the rollout",
    "the p99 latency is 80 ms and stable",
    "we used to see an increase in p99 latency before we pinned the CPUs",
    "if there is a spike in latency the autoscaler adds a replica",
    "the latency figures are reported in seconds by the ALB",
    "do the pods get timeouts to the ClusterIP as well?",
    "there are no timeouts to the ClusterIP anymore",
    "we previously had timeouts to the ClusterIP but upgrading kube-proxy fixed it",
    "the connection timed out while calling the payment API",  # a generic timeout names no Service
    "the job gets timeouts to the database during backups",  # no Service address named
    "does the utilization drop when using more GPUs?",
    "the utilization does not drop when we add a second GPU",
    "the CPU utilization drops to 20% on the GPU nodes",  # another resource's utilisation
    "the utilization drops on the CPU side while the job waits",  # no GPU named
]


@pytest.mark.parametrize("sentence", NOT_SAID)
def test_a_question_negation_healthy_figure_or_past_names_no_symptom(sentence: str) -> None:
    assert "symptoms" not in stated_facts(sentence), sentence


@pytest.mark.parametrize(("sentence", "ports"), [
    ("the Service has a target port of `8000`, but the pod is listening on port `80`", ["8000"]),
    ("the container listens on 8080 but the targetPort is 9090", ["9090"]),
    ("targetPort: 3000 while the app is listening on port 8080", ["3000"]),
])
def test_a_target_port_said_to_differ_from_the_listening_port_is_read(sentence: str, ports: list[str]) -> None:
    assert stated_facts(sentence).get("service.target_port_numbers_undeclared") == ports


@pytest.mark.parametrize("sentence", [
    "the Service has a target port of 80 and the pod is listening on port 80",  # they agree
    "is the target port 8000 while the pod is listening on port 80?",
    "the target port is not 8000, the pod is listening on port 80",
    "the target port is 8000 and the database listens on 5432",  # no pod or container named as the listener
])
def test_a_matching_asked_or_denied_target_port_is_not_read(sentence: str) -> None:
    assert "service.target_port_numbers_undeclared" not in stated_facts(sentence)


def test_a_term_quoted_on_its_own_is_said_and_a_longer_quoted_message_is_not() -> None:
    # Rule tests (made-up sentences): inline code or quotes around the term alone only set it off.
    assert stated_facts("the `dcgm-exporter` pod is in `CrashLoopBackOff` after the upgrade") == {
        "container.waiting.reason": "CrashLoopBackOff"}
    said = stated_facts('the ingress sends "503 Service Temporarily Unavailable" for the new app')
    assert said == {"http.error_statuses": [503], "symptoms": {"error-rate"}}
    quoted = stated_facts('the log says "upstream returned 503 Service Temporarily Unavailable to the client"')
    assert quoted == {}
    assert stated_facts("is the pod in `CrashLoopBackOff` again?") == {}
    assert stated_facts("the pod is not in `CrashLoopBackOff` anymore") == {}


def test_the_crashloop_signal_gives_the_waiting_reason_only_for_the_kubelet_word() -> None:
    # Made-up lines: the kubelet's CrashLoopBackOff is the waiting reason; "is crash-looping" says no reason.
    assert joined_facts("kubectl shows the pod in CrashLoopBackOff")["container.waiting.reason"] == "CrashLoopBackOff"
    assert "container.waiting.reason" not in joined_facts("the exporter is crash-looping on every node")


@pytest.mark.parametrize("line", [
    # kubernetes/kubernetes pkg/controller/volume/attachdetach/reconciler/reconciler.go (reportMultiAttachError),
    # its second half rendered as the controller prints it, and retyped in lower case
    "Volume is already exclusively attached to one node and can't be attached to another",
    "Volume is already used by pod(s) app-6c9f7d-x2k4p",
    "the volume is already exclusively attached to one node and can't be attached to another",
])
def test_the_multi_attach_reason_alone_is_read(line: str) -> None:
    facts = parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=line)).facts
    assert "multi-attach" in next(f.value for f in facts if f.name == "volume.errors")


def test_another_programs_volume_in_use_is_not_multi_attach() -> None:
    facts = joined_facts("This volume is already used by another VM.")
    assert "volume.errors" not in facts


# Verbatim lines from public threads (whole lines), with the thread beside each.
REAL = [
    ("https://github.com/kubernetes/kubernetes/issues/54580",
     "Intermittent timeout to service ip",  # the title
     {"symptoms": {"service-unreachable"}}),
    ("https://github.com/istio/istio/issues/22845",
     "Yes, confirmed the regression by 2nd run. The 2nd perf run for https://github.com/istio/istio/pull/20891 "
     "shows no regression, which is a previous commit of https://github.com/istio/istio/pull/21162. But the 2nd perf "
     "run for https://github.com/istio/istio/pull/21162 do have a large jump on latency. I have sent those rawdata, "
     "config_dump and cluster info with @bianpengyuan and @howardjohn.",
     {"symptoms": {"latency"}}),
    # The same thread as a corpus case, another paragraph: the utilisation said NOT to drop names nothing.
    ("https://github.com/horovod/horovod/issues/2380",
     "What puzzles me is that the utilization does not drop when using 2 or more GPUs.",
     {}),
]


@pytest.mark.parametrize(("url", "text", "expected"), REAL, ids=[r[0] for r in REAL])
def test_a_real_sentence_is_read_as_said(url: str, text: str, expected: dict[str, object]) -> None:
    assert stated_facts(text) == expected, url


@pytest.mark.parametrize(("sentence", "running"), [
    ("I run the script successful on two machines and each of them has two gpus", True),
    ("we ran the training job fine on one node", True),
    ("I run the script with python train.py --epochs 10", None),  # how it is run, not that it ran
    ("did you run the script successfully on both machines?", None),
    ("we never ran the job successfully on this cluster", None),
])
def test_a_job_said_to_have_run_is_read(sentence: str, running: bool | None) -> None:
    assert stated_facts(sentence).get("job.said_running") is running


def test_double_spaces_typed_in_prose_are_no_columns_but_a_row_still_is() -> None:
    # Rule tests (made-up lines): long runs of words between the gaps are a sentence typed with double spaces.
    typed = ("Most of the time the GPU util is 0% while we train on two machines.  The training data  is read from a "
             "shared NFS mount by every worker process")
    assert stated_facts(typed).get("gpu.job_util_percent") == 0.0
    row = "  Warning  BackOff  3m  kubelet  the pod is in CrashLoopBackOff and it keeps restarting"
    assert stated_facts(row) == {}
