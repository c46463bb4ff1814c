"""Network evidence through the whole pipeline: a Service compared with the pods and policies pasted beside it, a
client's error against a Service, and a lone conntrack -S. Real pastes carry their thread; the two objects
written here to pin the join's rules say so."""

from __future__ import annotations

from pathlib import Path

from collectors.paste import artifacts_from_text
from playbooks.pipeline import analyse
from playbooks.report import Report

REALWORLD = Path(__file__).resolve().parents[2] / "realworld"
PASTES = Path(__file__).parent / "network_pastes"  # verbatim, as pasted (trailing spaces kept)


def _report(text: str) -> Report:
    return analyse(artifacts_from_text(text, "paste"))


def _held(report: Report) -> dict[str, str]:
    return {f"{f.playbook}/{h.id}": h.status for f in report.findings for h in f.hypotheses
            if h.status in ("confirmed", "likely")}


# https://github.com/kubernetes/kubernetes/issues/73049 : containerPort 9999, targetPort 3000, and the app worked,
# because containerPort is informational. Two files pasted one after the other, without `---`.
ISSUE_73049 = (PASTES / "kubernetes-issue-73049.txt").read_text(encoding="utf-8")


def test_a_numeric_target_port_no_container_declares_is_only_a_hint() -> None:
    report = _report(ISSUE_73049)
    assert report.facts["service.selector_matches_pods"] is True
    assert report.facts["service.target_port_numbers_undeclared"] == ["3000"]
    assert "service.target_port_names_missing" not in report.facts
    assert report.symptoms == []  # nothing failed in that thread: no playbook, no port-mismatch


# Written for this test (not evidence): the rule the endpoints controller applies to a named targetPort.
SERVICE_AND_DEPLOYMENT = """\
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  ports:
  - port: 80
    targetPort: http
  selector:
    app: web

apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx
        ports:
        - containerPort: 8080
"""


def test_a_named_target_port_no_container_has_confirms_port_mismatch_across_blocks() -> None:
    report = _report(SERVICE_AND_DEPLOYMENT)
    assert report.facts["service.target_port_names_missing"] == ["http"]
    assert report.facts["service.selector_matches_pods"] is True
    assert _held(report)["service-unreachable/port-mismatch"] == "confirmed"


def test_a_selector_no_pasted_pod_carries() -> None:
    report = _report(SERVICE_AND_DEPLOYMENT.replace("app: web\n    spec:", "app: web-v2\n    spec:"))
    assert report.facts["service.selector_matches_pods"] is False
    assert "service.target_port_names_missing" not in report.facts  # no selected pod: ports are not judged
    assert "service-unreachable" in report.symptoms


POLICY = """
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: only-frontend
  namespace: shop
spec:
  podSelector:
    matchLabels:
      app: web
  ingress:
  - from:
    - podSelector:
        matchLabels:
          role: frontend
"""


def test_a_policy_selecting_the_backends_takes_part_in_the_trigger() -> None:
    named_ok = SERVICE_AND_DEPLOYMENT.replace("targetPort: http", "targetPort: 8080")
    report = _report(named_ok + POLICY)
    assert report.facts["netpol.selects_backends"] is True
    assert _held(report)["service-unreachable/network-policy"] == "likely"
    other = _report(named_ok + POLICY.replace("app: web\n  ingress", "app: billing\n  ingress"))
    assert other.facts["netpol.selects_backends"] is False
    open_to_all = _report(named_ok + POLICY.replace("  - from:\n    - podSelector:\n        matchLabels:\n"
                                                    "          role: frontend\n", "  - {}\n"))
    assert "netpol.selects_backends" not in open_to_all.facts


def test_a_curl_refusal_against_a_service_with_endpoints_points_at_the_target_port() -> None:
    # https://github.com/kelseyhightower/kubernetes-the-hard-way/issues/331
    curl = '"curl: (7) Failed to connect to 10.2.0.1 port 443: Connection refused"\n'
    report = _report(curl)
    assert report.facts["client.errors"] == ["refused"]
    assert report.symptoms == ["service-unreachable"]
    assert _held(report) == {}  # a refusal alone names no cause; the report asks for the endpoints
    # The same refusal beside a Service that lists ready endpoints (two real pastes from two threads, put side by
    # side: https://github.com/kubernetes/kubernetes/issues/7341 for the description).
    described = (REALWORLD / "service-unreachable/k8s-issue-7341-describe-service-three-endpoints/evidence.txt")
    with_endpoints = _report(curl + "\n" + described.read_text(encoding="utf-8"))
    assert with_endpoints.facts["endpoints.ready"] == 3
    assert _held(with_endpoints)["service-unreachable/port-mismatch"] == "likely"


def test_a_reset_alone_makes_nothing_likely() -> None:
    # https://github.com/canonical/microk8s/issues/353
    report = _report("All of the results are: *curl: (56) Recv failure: Connection reset by peer*\n")
    assert report.facts["client.errors"] == ["reset"]
    assert _held(report) == {}


def test_a_lone_conntrack_s_with_drops_runs_the_latency_tree() -> None:
    # https://github.com/influxdata/telegraf/issues/8955 (cpu=0..7 of the reporter's conntrack -S)
    paste = (PASTES / "telegraf-issue-8955.txt").read_text(encoding="utf-8")
    report = _report(paste)
    assert report.facts["conntrack.drops"] == 2
    assert report.symptoms == ["latency"]
    assert _held(report) == {"latency/conntrack-exhaustion": "likely"}


def test_a_lone_conntrack_s_with_zero_drops_runs_nothing() -> None:
    report = _report((REALWORLD / "latency/rke2-issue-3924-conntrack-percpu-no-drops/evidence.txt").read_text())
    assert report.facts["conntrack.drops"] == 0
    assert report.symptoms == []


def test_a_pod_description_gives_labels_and_port_numbers_but_no_port_names() -> None:
    # https://github.com/flannel-io/flannel/issues/1076 (the start of the reporter's kubectl describe pod)
    paste = (PASTES / "flannel-issue-1076.txt").read_text(encoding="utf-8")
    report = _report(paste)
    assert report.facts["pod.labels"] == ["k8s-app=kube-dns", "pod-template-hash=757f4547d9"]
    assert report.facts["pod.container_ports"] == ["53", "9153"]
