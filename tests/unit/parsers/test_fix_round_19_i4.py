"""Fix round 19 (i4): viper's config parse error (signals.yaml), a term hedged as "potential" or defined rather than
reported (stated.py), a memory leak said (memory.growing), a kill said at the container's memory limit
(kernel.oom_memcg), and a scale-down said to have evicted or drained (node.draining). Real lines, each from another
public thread than the realworld case it came with (named beside it), and near misses that must read nothing; a line
marked composed was written for the test where no public line of that shape was found."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts


def _symptoms(facts: dict[str, object]) -> set[object]:
    value = facts.get("evidence.symptoms", [])
    return set(value) if isinstance(value, list) else set()


# ---- viper: the config file the daemon was given does not parse ----------------------------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/crypto-org-chain/chain-main/issues/605 (description)
    "Error: While parsing config: invalid character '/' looking for beginning of object key string",
    # https://github.com/tducasse/go-instabot/issues/58 (title)
    "ERROR: Error reading config file, While parsing config: invalid character 'C' looking for beginning of value",
])
def test_viper_config_parse_error_is_a_config_error(line: str) -> None:
    assert joined_facts(line + "\n").get("app.errors") == ["config"]


@pytest.mark.parametrize("line", [
    # viper's own start-up line of a config that did parse (composed in viper's words: "Using config file:")
    "Using config file: /etc/eventrouter/config.json",
    # a JSON error with no config named: an API answer that was not JSON
    # https://github.com/AIPentest/CyberStrikeAI/issues/9 (description)
    "unmarshal openai response: invalid character '<' looking for beginning of value",
])
def test_other_json_errors_and_a_loaded_config_are_not_config_errors(line: str) -> None:
    assert "config" not in (joined_facts(line + "\n").get("app.errors") or [])


# ---- a term hedged as potential, or defined, is not reported --------------------------------------------------------
@pytest.mark.parametrize("line", [
    "Also `OOMKilled` is a SIGKILL, and thus should not yield graceful shutdowns.",  # composed, the case's shape
    "I thought about a potential `OOMKilled` issue, but the graphs show memory far below the limit.",  # composed
    "OOMKilled is a container termination reason, not a pod phase.",  # composed, the glossary's shape
])
def test_a_definition_or_a_potential_kill_is_no_kill(line: str) -> None:
    assert "container.last_terminated.reason" not in joined_facts(line + "\n")


@pytest.mark.parametrize("line", [
    # https://github.com/kubernetes/kubernetes/issues/98157 (title)
    "When the pod is OOMKilled, the pod falls into the loop OOMKilled.",
    # the reason after its subject is a report, not a definition (composed)
    "The last state of the pod is OOMKilled and it restarts every hour.",
])
def test_a_kill_reported_is_still_read(line: str) -> None:
    assert joined_facts(line + "\n").get("container.last_terminated.reason") == "OOMKilled"


# ---- a memory leak said ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/aws/containers-roadmap/issues/2605 (description)
    "eks-node-monitoring-agent (at least v1.0.2-eksbuild.2) has a memory leak which triggers hits it's configured "
    "limit and causes k8s to restart the container (correctly).",
    # https://github.com/allenai/allennlp-demo/issues/37 (description)
    "The AllenNLP demo has a memory leak that causes pods to fail in Kubernetes.",
])
def test_a_memory_leak_said_is_memory_growing(line: str) -> None:
    facts = joined_facts(line + "\n")
    assert facts.get("memory.growing") is True
    assert "oom-killed" not in _symptoms(facts)  # a leak explains a kill, it shows none


@pytest.mark.parametrize("line", [
    "It is not a memory leak: the working set is flat between the kills.",  # composed
    "I suspect a memory leak in the exporter.",  # composed
    "Is this a memory leak in the gateway?",  # composed
])
def test_a_leak_denied_hedged_or_asked_says_nothing(line: str) -> None:
    assert "memory.growing" not in joined_facts(line + "\n")


# ---- a kill said at the container's own memory limit ----------------------------------------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/ministryofjustice/cloud-platform-environments/pull/16999 (description)
    "When deploying more than one pod, we are coming close to, or hitting our memory limits and on some pods getting "
    "an OOMKILLED message.",
    # https://github.com/redhat-appstudio/infra-deployments/pull/7370 (description)
    "Temporarily increase controller pod memory allocation to address recurring OOMKilled errors when memory usage "
    "reaches the current limit.",
])
def test_a_kill_at_the_memory_limit_is_the_memory_cgroups(line: str) -> None:
    assert joined_facts(line + "\n").get("kernel.oom_memcg") is True


@pytest.mark.parametrize("line", [
    # https://github.com/okd-project/okd/issues/1275 (title): the kill said to come below the limit
    "OOM-killer kill pod when he doesn't exceed limit",
    # a limit reached with no kill named (composed)
    "The pods are hitting their memory limits during the nightly batch.",
    "The container was never killed, although it exceeded its memory limit for a minute.",  # composed
])
def test_a_limit_reached_without_a_kill_or_denied_is_not_read(line: str) -> None:
    assert "kernel.oom_memcg" not in joined_facts(line + "\n")


# ---- a scale-down said to have evicted or drained -------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/kubernetes/autoscaler/issues/4789 (title)
    "Nodes with safe-to-evict flag set to false gets evicted during scale down",
    # https://github.com/argoproj/argo-rollouts/issues/2093 (title): the autoscaler evicting, hedged ("Maybe") in
    # front of it, so only the sentence that reports it counts; its comment says it flatly:
    "cluster-autoscaler uses evict. The cluster autoscaler evicted the pods of the node.",
])
def test_a_scale_down_said_to_evict_is_a_drain(line: str) -> None:
    facts = joined_facts(line + "\n")
    assert facts.get("node.draining") is True
    assert "evicted" in _symptoms(facts)


@pytest.mark.parametrize("line", [
    # https://github.com/GoogleCloudPlatform/fda-mystudies/issues/4602 (description): a scale-down said to work
    "After applying the annotation, cluster autoscaler scales down the cluster correctly.",
    # https://github.com/argoproj/argo-rollouts/issues/2093 (title): hedged
    "Maybe problem with cluster-autoscaler when evicting pods for draining node",
    # a question (composed)
    "Why did the cluster autoscaler evict all pods of the node?",
    # denied (composed)
    "The cluster autoscaler never evicted the hub pod; the kubelet did.",
])
def test_a_scale_down_that_works_hedged_asked_or_denied_is_no_drain(line: str) -> None:
    assert "node.draining" not in joined_facts(line + "\n")
