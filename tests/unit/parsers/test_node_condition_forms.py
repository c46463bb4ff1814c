"""Node conditions and kubelet lines in their older and indirect forms (issue 24, node helper): kubectl 1.6-1.7's
role in the get-nodes STATUS, condition rows without their describe header, NodeConditions in YAML cut with
"[...]", the event recorder's log lines (timed pulls), wide pod rows still starting, and evictions said in words.

Real pastes carry their URL; the rest render the program's layout with sample values, as it prints it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.parsers.kubernetes import describe_node, node_table
from collectors.parsers.kubernetes.event_log_lines import event_of, is_event_line
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES, split_joined_facts, stated_facts

# kubectl 1.6-1.7 printNode: STATUS is the Ready condition, then SchedulingDisabled when cordoned, then the node's
# role (its kubernetes.io/role label); rendered with sample names in the 1.6 column set NAME STATUS AGE VERSION.
_HEADER = "NAME              STATUS                            AGE       VERSION"


@pytest.mark.parametrize(("status", "conditions", "cordoned"), [
    ("NotReady,master", ["NotReady"], False),
    ("Ready,SchedulingDisabled,master", [], True),
    ("NotReady,SchedulingDisabled,agent", ["NotReady"], True),
    ("Unknown,node", ["NotReady"], False),
])
def test_the_role_kubectl_1_6_appended_to_status_is_read_past(status: str, conditions: list[str],
                                                              cordoned: bool) -> None:
    text = f"{_HEADER}\nnode-a            {status:<33} 40d       v1.7.6\n"
    assert node_table.sniff(text) == 90
    facts = split_joined_facts(text)
    assert facts.get("node.conditions") == conditions
    assert facts.get("node.unschedulable", False) is cordoned


def test_a_healthy_old_table_with_roles_names_no_condition() -> None:
    text = (f"{_HEADER}\nmaster1           Ready,master                      1h        v1.7.6\n"
            "node1             Ready                             1h        v1.7.6\n")
    facts = split_joined_facts(text)
    assert "NotReady" not in facts.get("node.conditions", [])  # type: ignore[operator]
    assert "node-not-ready" not in facts.get("evidence.symptoms", [])  # type: ignore[operator]


# https://github.com/Azure/acs-engine/issues/4069 (description): the condition rows of a describe node, the header
# cut off (a middle run of whole lines). NetworkUnavailable False with RouteCreated is a healthy route.
ACS_ENGINE_4069_ROWS = FIRST_SIGHT_PASTES["acs-engine-4069-condition-rows-route-created"]


def test_bare_condition_rows_are_a_node_description_and_route_created_is_healthy() -> None:
    assert describe_node.sniff(ACS_ENGINE_4069_ROWS) == 50
    facts = split_joined_facts(ACS_ENGINE_4069_ROWS)
    assert facts.get("node.conditions") == []
    assert "node-not-ready" not in facts.get("evidence.symptoms", [])  # type: ignore[operator]


def test_a_network_unavailable_row_is_read_without_its_header() -> None:
    row = ("  NetworkUnavailable   True    Wed, 18 Apr 2018 15:01:44 +0100   Wed, 18 Apr 2018 15:01:44 +0100   "
           "NoRouteCreated               RouteController failed to create a route\n")
    assert split_joined_facts(ACS_ENGINE_4069_ROWS + row).get("node.conditions") == ["NetworkUnavailable"]


# A NodeCondition as `kubectl get node -o yaml` prints it (kubernetes/api core/v1 NodeCondition), cut out of the
# object with "[...]" where the person dropped lines; rendered with the route controller's reason.
def _condition_yaml(status: str, reason: str, kind: str = "NetworkUnavailable", cut: str = "[...]") -> str:
    return (f"# kubectl get nodes -o yaml\n{cut}\n    - lastHeartbeatTime: null\n"
            f"      lastTransitionTime: 2016-06-14T08:01:20Z\n      message: sample\n      reason: {reason}\n"
            f"      status: \"{status}\"\n      type: {kind}\n{cut}\n")


@pytest.mark.parametrize("cut", ["[...]", "...", "…", "[snip]"])
def test_a_node_condition_cut_from_its_object_is_read(cut: str) -> None:
    assert split_joined_facts(_condition_yaml("True", "NoRouteCreated", cut=cut)).get("node.conditions") == \
        ["NetworkUnavailable"]


@pytest.mark.parametrize(("status", "reason", "kind"), [
    ("False", "RouteCreated", "NetworkUnavailable"),
    ("False", "CalicoIsUp", "NetworkUnavailable"),
    ("True", "KubeletReady", "Ready"),
])
def test_a_healthy_node_condition_names_nothing(status: str, reason: str, kind: str) -> None:
    facts = split_joined_facts(_condition_yaml(status, reason, kind))
    assert facts.get("node.conditions") == []


# https://github.com/kubernetes/kubernetes/issues/91560 (description): the kubelet's event lines for one pull, the
# Pulled line pasted first and the Pulling line found above it second; the pull took 05:41:57.765 -> 05:42:16.850.
K8S_91560 = FIRST_SIGHT_PASTES["kubernetes-91560-event-lines-pulled-then-pulling"]


def test_logged_events_time_a_pull_in_the_order_they_happened() -> None:
    facts = split_joined_facts(K8S_91560)
    assert facts["image.pull_seconds"] == 19.085
    assert facts["image.pulling"] is False
    # A namespace holding "rror" (mirror-pod) made the successful pull read as a pull error before.
    assert "image.pull_error" not in facts and "image-pull" not in facts.get("evidence.symptoms", [])  # type: ignore[operator]


def test_an_event_line_gives_its_object_reason_and_time() -> None:
    ev = event_of(K8S_91560.split("\n")[1], 2)
    assert ev is not None
    assert (ev.type, ev.reason, ev.kind) == ("Normal", "Pulling", "pod")
    assert ev.namespace == "mirror-pod-with-grace-period-2630"
    assert ev.at == pytest.approx((((31 + 28 + 31 + 30 + 28) * 24 + 5) * 60 + 41) * 60 + 57.765151)


@pytest.mark.parametrize("line", [
    # kubectl 1.1-1.2 logged no type; the reference's package was api before 1.6.
    """I0211 00:08:08.653240    3902 server.go:570] Event(api.ObjectReference{Kind:"Pod", Namespace:"ns", """
    """Name:"web-0", UID:"u", APIVersion:"v1", ResourceVersion:"1", FieldPath:"spec.containers{app}"}): """
    """reason: 'Pulling' pulling image "x" """,
    """I0211 00:08:08.653240    3902 event.go:291] "Event occurred" object="ns/web-0" kind="Pod" """,
])
def test_only_the_recorders_own_form_is_an_event_line(line: str) -> None:
    assert is_event_line(line) is ("ObjectReference{" in line)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("Event(v1.ObjectReference{Kind:\"Pod\"}): type: 'reason: {}\" ")),
               max_size=300))
def test_an_event_line_reader_never_raises_on_garbage(text: str) -> None:
    ev = event_of(text, 1)
    assert ev is None or ev.reason


# `kubectl get pods -o wide` as kubectl 1.14+ prints it (printPod: IP <none> until the sandbox has an address),
# rendered with sample names: a pod still starting without an IP is Pending; one with its IP has run.
_WIDE = "NAME     READY   STATUS              RESTARTS   AGE   IP           NODE     NOMINATED NODE   READINESS GATES\n"


@pytest.mark.parametrize(("status", "ip", "pending"), [
    ("ContainerCreating", "<none>", True),
    ("Init:0/1", "<none>", True),
    ("ContainerCreating", "10.1.2.3", False),
    ("Running", "10.1.2.3", False),
])
def test_a_wide_row_still_starting_without_an_ip_is_pending(status: str, ip: str, pending: bool) -> None:
    text = _WIDE + f"web-0    0/1     {status:<19} 0          16m   {ip:<12} node-1   <none>           <none>\n"
    assert (split_joined_facts(text).get("pods.pending") == ["web-0"]) is pending


@pytest.mark.parametrize(("text", "expected"), [
    ("During an Ephemeral-Storage pressure situation, critical pods were evicted to free the pressure.",
     "ephemeral-storage"),
    ("The pods keep getting evicted because the node runs out of ephemeral storage.", "ephemeral-storage"),
])
def test_the_resource_of_an_eviction_said_in_words(text: str, expected: str) -> None:
    assert stated_facts(text).get("eviction.resource") == expected


@pytest.mark.parametrize("text", [
    "Were the pods evicted because of ephemeral-storage?",
    "The pods were not evicted, ephemeral-storage usage is low.",
    "We set an ephemeral-storage limit on the pod.",  # no eviction in the sentence
])
def test_an_eviction_resource_asked_denied_or_without_an_eviction_is_not_read(text: str) -> None:
    assert "eviction.resource" not in stated_facts(text)


def test_an_elision_mark_inside_a_block_scalar_is_its_text() -> None:
    # A Pod (rendered) whose args hold a line "..." as part of a script: the document reads whole, not cut there.
    text = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-0\n  namespace: shop\nspec:\n  containers:\n"
            "  - name: app\n    image: nginx\n    args:\n    - |\n      echo start\n      ...\n      echo done\n"
            "status:\n  phase: Pending\n")
    facts = split_joined_facts(text)
    assert facts["pod.name"] == "web-0" and facts["pod.phase"] == "Pending"


@pytest.mark.parametrize("text", ["Is the node NotReady?", "Could the worker node be NotReady after the upgrade?"])
def test_a_question_about_a_not_ready_node_names_nothing(text: str) -> None:
    facts = stated_facts(text)
    assert "node.conditions" not in facts and not facts.get("symptoms")


# `kubectl get node -o json`'s conditions member cut out without its braces, rendered with the reasons Calico's node
# agent sets on NetworkUnavailable (CalicoIsUp False while it runs; CalicoIsDown True as it shuts down).
def _conditions_member(status: str, reason: str) -> str:
    return ('"conditions": [\n    {\n        "lastHeartbeatTime": "2019-03-01T10:00:00Z",\n'
            '        "lastTransitionTime": "2019-03-01T09:00:00Z",\n        "message": "sample",\n'
            f'        "reason": "{reason}",\n        "status": "{status}",\n        "type": "NetworkUnavailable"\n'
            "    }\n],\n")


@pytest.mark.parametrize(("status", "reason", "conditions"), [
    ("True", "CalicoIsDown", ["NetworkUnavailable"]),
    ("False", "CalicoIsUp", []),
])
def test_a_json_conditions_member_pasted_without_its_object(status: str, reason: str,
                                                            conditions: list[str]) -> None:
    assert split_joined_facts(_conditions_member(status, reason)).get("node.conditions") == conditions
