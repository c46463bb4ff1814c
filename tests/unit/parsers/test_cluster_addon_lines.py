"""Issue 24 round 16: what the cluster's add-ons print when pods wait, are evicted or cannot resolve names, read
from real pastes (first_sight_pastes.yaml, network_pastes.yaml and proxy_pastes.yaml, each with its thread): the
kubelet eviction manager's must-evict and evicted lines, Volcano's queue quota, Kueue's preemption, CoreDNS's loop
plugin, flanneld's lease and Kong's failed name resolution. Each class has a healthy line from the same program
beside it that must give nothing. The catalogs' templates are rendered by test_k8s_wordings.py and
test_network_catalog.py."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES, joined_facts


def test_the_eviction_manager_that_must_evict_names_the_resource_it_reclaims() -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES["minikube-4084-eviction-manager-must-evict"])
    assert facts["eviction.reclaiming"] is True
    assert facts["eviction.resource"] == "ephemeral-storage"
    assert facts["node.conditions"] == ["DiskPressure"]


def test_the_must_evict_line_alone_is_read() -> None:
    line = FIRST_SIGHT_PASTES["minikube-4084-eviction-manager-must-evict"].splitlines()[-1]
    assert joined_facts(line)["eviction.resource"] == "ephemeral-storage"


@pytest.mark.parametrize("line", [
    # the manager reclaimed enough from images and dead containers: nothing is evicted
    "I0412 09:28:14.769517   14260 eviction_manager.go:346] eviction manager: able to reduce ephemeral-storage"
    " pressure without evicting pods.",
    'I0617 16:18:42.212181 3814777 eviction_manager.go:349] "Eviction manager: able to reduce resource pressure'
    ' without evicting pods." resourceName="ephemeral-storage"',
    # garbage collection runs on a timer as well, on a healthy node
    "I0412 09:28:14.744640   14260 container_gc.go:85] attempting to delete unused containers",
])
def test_a_manager_that_evicts_nothing_shows_no_eviction(line: str) -> None:
    facts = joined_facts(line)
    assert "eviction.seen" not in facts
    assert "eviction.reclaiming" not in facts


def test_a_pod_the_manager_evicted_is_an_eviction() -> None:
    facts = joined_facts('I0617 16:18:44.301122    2211 eviction_manager.go:616] "Eviction manager: pod is evicted'
                         ' successfully" pod="default/web-0"')
    assert facts["eviction.seen"] is True
    assert facts["evidence.symptoms"] == ["evicted"]


def test_a_volcano_queue_without_quota_for_the_group_is_quota() -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES["volcano-4479-queue-quota-insufficient"])
    assert facts["quota.exceeded"] is True
    assert facts["gang.unschedulable"] is True


def test_a_volcano_gang_that_waits_alone_is_no_quota() -> None:
    row = FIRST_SIGHT_PASTES["volcano-4479-queue-quota-insufficient"].splitlines()[3]
    assert "gang unschedulable" in row
    assert "quota.exceeded" not in joined_facts(row)


def test_a_workload_kueue_preempted_is_preempted() -> None:
    assert joined_facts(FIRST_SIGHT_PASTES["kueue-7350-preempted-workload-conditions"])["scheduling.preempted"] is True


def test_the_workload_that_preempts_is_not_preempted() -> None:
    assert "scheduling.preempted" not in joined_facts(FIRST_SIGHT_PASTES["kueue-7350-preemptor-pending-the-preemption"])


@pytest.mark.parametrize("line", [
    # CoreDNS starting normally, with the loop plugin in its Corefile
    "2019-04-17T00:18:44.485Z [INFO] plugin/reload: Running configuration MD5 = fe280f2b52a55a24ba57f2b4328c2777",
    "    loop",
    # an operator asking about the plugin, not CoreDNS reporting a loop
    "Is the plugin/loop: check enough to catch a forwarding loop through systemd-resolved?",
])
def test_coredns_without_a_loop_shows_no_dns_failure(line: str) -> None:
    facts = joined_facts(line)
    assert "dns.errors" not in facts
    assert "evidence.symptoms" not in facts


@pytest.mark.parametrize("line", [
    # flanneld on a node with a podCIDR (flannel-io/flannel#993, before the node's address changed)
    "I0518 19:28:41.001704       1 main.go:235] Created subnet manager: Kubernetes Subnet Manager -"
    " hostname.mylabserver.com",
    "I0518 19:28:41.002001       1 main.go:353] Found network config - Backend type: vxlan",
])
def test_a_flanneld_that_registers_shows_no_cni_fault(line: str) -> None:
    assert "sandbox.errors" not in joined_facts(line)


@pytest.mark.parametrize("line", [
    # Kong's access log for a request it answered, and a question naming the words
    '172.20.1.7 - - [03/Dec/2020:11:29:16 +0000] "POST /mp/mp-admin/v1/product/ticket HTTP/1.0" 200 36 "-"'
    ' "PostmanRuntime/7.26.8"',
    "Why would Kong say name resolution failed when nslookup works?",
])
def test_kong_without_a_failed_lookup_shows_no_dns_failure(line: str) -> None:
    assert "dns.errors" not in joined_facts(line)
