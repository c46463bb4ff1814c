"""Weight of evidence (the scheduler reason that rules out the most nodes leads), and the subject each playbook's
checks name when a paste shows several broken pods. Real pasted text, with its source beside it."""

from __future__ import annotations

from bot.render.common import open_checks
from bot.render.slack import renderer
from bot.render.terminal import render_text
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import events
from collectors.parsers.kubernetes.messages.k8s_scheduling import reason_node_counts
from collectors.paste import artifacts_from_text
from playbooks.pipeline import analyse
from playbooks.report import Report


def _report(text: str) -> Report:
    return analyse(artifacts_from_text(text, "paste"))


def _statuses(report: Report) -> dict[str, tuple[str, float]]:
    return {h.id: (h.status, h.score) for f in report.findings for h in f.hypotheses}


# https://github.com/kubernetes/kubernetes/issues/29838 (zedtux, 2019-02-05)
AFFINITY_AND_CPU = ("55m         Warning   FailedScheduling                  Pod                   "
                    "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match pod affinity/anti-affinity, "
                    "2 node(s) didn't satisfy existing pods anti-affinity rules.")
# https://github.com/sapcc/helm-charts/pull/548 (BugRoger, 2019-01-28), a `kubectl describe event` line
PREDICATES = ("Message:             No nodes are available that match all of the predicates: Insufficient cpu (19), "
              "Insufficient memory (19), PodToleratesNodeTaints (10).")


def test_counts_are_read_per_reason_in_both_eras() -> None:
    assert reason_node_counts(AFFINITY_AND_CPU) == [("pod-affinity", 3), ("insufficient-cpu", 1)]
    assert reason_node_counts(PREDICATES) == [("insufficient-cpu", 19), ("insufficient-memory", 19),
                                              ("untolerated-taint", 10)]


def test_the_reason_blocking_most_nodes_leads_whatever_the_message_order() -> None:
    report = _report(AFFINITY_AND_CPU)
    assert report.facts["scheduling.reason_nodes"] == ["pod-affinity=3", "insufficient-cpu=1"]
    assert report.facts["scheduling.leading_reasons"] == ["pod-affinity"]
    statuses = _statuses(report)
    assert statuses["node-affinity"][0] == statuses["insufficient-cpu"][0] == "likely"
    # Without the counts the prior puts node-affinity (0.65) above insufficient-cpu (0.5) anyway; the counts widen it.
    lead = report.leading()
    assert lead is not None and (lead[0].playbook, lead[1].id) == ("pending", "node-affinity")


def test_a_tie_leads_with_both_and_the_taint_follows() -> None:
    report = _report(PREDICATES)
    assert report.facts["scheduling.leading_reasons"] == ["insufficient-cpu", "insufficient-memory"]
    statuses = _statuses(report)
    assert statuses["insufficient-cpu"][1] > statuses["untolerated-taint"][1]
    assert statuses["insufficient-memory"][1] > statuses["untolerated-taint"][1]


# https://www.techstacksdecoded.com/post/kubernetes-pod-statuses-explained ("Understanding the kubectl get pods output")
POD_TABLE = """$ kubectl get pods
NAME                                 READY   STATUS             RESTARTS   AGE
api-deployment-75675f5897-qqcnn      1/1     Running            0          2m
web-0                                1/1     Running            0          3m
init-demo                            0/1     Init:0/1           0          10s
img-bad                              0/1     ImagePullBackOff   0          35s
api-fail                             0/1     CrashLoopBackOff   5          3m
batch-job                            0/1     Completed          0          20m
oldpod                               0/1     Terminating        0          5s
"""


def test_each_playbook_checks_the_pod_that_shows_its_symptom() -> None:
    report = _report(POD_TABLE)
    assert set(report.symptoms) >= {"image-pull", "crash-loop"}
    checks = {f.playbook: " ".join(c for h in f.hypotheses for c in h.next_checks) for f in report.findings}
    assert "img-bad" in checks["image-pull"] and "api-fail" not in checks["image-pull"]
    assert "api-fail" in checks["crash-loop"] and "img-bad" not in checks["crash-loop"]


def test_the_paste_is_about_its_first_broken_pod_not_one_still_initialising() -> None:
    assert _report(POD_TABLE).facts["pod.name"] == "img-bad"


def test_a_report_where_nothing_leads_still_lists_next_checks() -> None:
    report = _report(POD_TABLE)
    assert report.leading() is None
    checks = open_checks(report)
    assert any("img-bad" in c for c in checks) and any("api-fail" in c for c in checks)
    text = render_text(report)
    assert "Next checks" in text and "img-bad" in text.split("Next checks", 1)[1]
    slack = [str(b.to_dict()) for b in renderer().body_blocks(report)]
    assert any("Next checks" in b and "img-bad" in b and "api-fail" in b for b in slack)


# https://github.com/kubernetes/website/blob/89ce7eec9d6452eae7061696d2bf786ac42c7845/content/id/docs/concepts/policy/pod-security-policy.md
OLD_EVENTS = """kubectl-user get events | head -n 2
LASTSEEN   FIRSTSEEN   COUNT     NAME              KIND         SUBOBJECT                TYPE      REASON                  SOURCE                                  MESSAGE
1m         2m          15        pause-7774d79b5   ReplicaSet                            Warning   FailedCreate            replicaset-controller                   Error creating: pods "pause-7774d79b5-" is forbidden: no providers available to validate pod request
"""  # noqa: E501


def test_kubectl_1_3_to_1_9_event_rows_name_their_object() -> None:
    result = events.parse(Artifact(id="a1", kind=ArtifactKind.EVENTS, content=OLD_EVENTS))
    reasons = [(f.value, f.citation.start, f.subject) for f in result.facts if f.name == "events.reasons"]
    assert reasons == [(["FailedCreate"], 3, "")]  # the artifact's reasons carry its own (empty) subject


# https://github.com/kubernetes/kubernetes/issues/9207 (scottstensland, 2016-10-21, Kubernetes 1.4.0)
OLD_FIT_ERROR = """  FirstSeen\tLastSeen\tCount\tFrom\t\t\tSubobjectPath\tType\t\tReason                                                                          Message
  ---------\t--------\t-----\t----\t\t\t-------------\t--------\t------                                                                          -------
  51m\t\t37m\t\t50\t{default-scheduler }\t\t\tWarning\t\tFailedScheduling                                                                        pod (loudmail-deployment-1671311517-s1nb9) failed to fit in any node
"""  # noqa: E501


def test_the_1_4_fit_error_is_a_scheduling_failure() -> None:
    report = _report(OLD_FIT_ERROR)
    assert report.facts["scheduling.failed"] is True
    assert "pending" in report.symptoms


def test_an_event_name_gives_its_object() -> None:
    # kubectl 1.10-1.13 put the event's own name (object name, a dot, the time in hex) in the NAME column.
    text = ("LAST SEEN   FIRST SEEN   COUNT     NAME                        KIND      SUBOBJECT   TYPE      REASON    "
            "SOURCE    MESSAGE\n"
            "34s         5m           22        dns-test.15404a7104cc67cf   Pod                   Warning   Failed    "
            "kubelet   Error: ErrImagePull\n")
    result = events.parse(Artifact(id="a1", kind=ArtifactKind.EVENTS, content=text))
    assert {f.subject for f in result.facts if f.name == "image.pull_error"} == {"pod/dns-test"}
