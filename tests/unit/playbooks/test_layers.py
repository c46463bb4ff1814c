"""The narrowing question (issue #29, point 6): findings in, the first open layer and its closing check out."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.render.markdown import render_markdown
from bot.render.slack import blocks_json
from bot.render.terminal import render_text
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.recorded.replay import replay
from playbooks.layers import LAYERS_FILE, ORDER, layer_problems, load_layers, narrowing, open_hypotheses
from playbooks.pipeline import default_playbooks
from playbooks.report import Finding, HypothesisResult, Status
from playbooks.scope import load_questions

STATUSES: dict[str, tuple[Status, float]] = {"c": ("confirmed", 0.9), "l": ("likely", 0.6), "u": ("unknown", 0.3),
                                             "r": ("ruled-out", 0.0)}
SUBJECT = {"pod": "trainer-0", "namespace": "ml", "node": "gpu-node-7", "service": "trainer"}


def _finding(playbook: str, statuses: str, aside: str | None = None, merged: str = "") -> Finding:
    """`statuses` is "id=status ..." (c, l, u, r for confirmed, likely, unknown, ruled-out)."""
    hs = []
    for item in statuses.split():
        hid, _, s = item.partition("=")
        status, score = STATUSES[s]
        hs.append(HypothesisResult(id=hid, status=status, score=score, claim="c", falsified_by="f",
                                   merged_into=(merged or None) if hid == "oom-loop" else None))
    return Finding(playbook=playbook, title="t", hypotheses=hs, aside=aside)


# (case, findings, first open layer or None, every open layer, the hypotheses named for the first)
CASES: list[tuple[str, list[Finding], str | None, list[str], list[str]]] = [
    ("nothing-decided-opens-the-first-layer-in-order",
     [_finding("oom-killed", "limit-too-low=u node-oom=u memory-leak=u gpu-oom=u")],
     "application", ["application", "pod", "node", "gpu"], ["oom-killed/memory-leak"]),
    ("a-confirmed-cause-settles-its-layer-and-every-later-one",
     [_finding("oom-killed", "limit-too-low=c node-oom=u gpu-oom=u memory-leak=r")], None, [], []),
    ("an-earlier-layer-stays-open-above-a-confirmed-cause",
     [_finding("oom-killed", "limit-too-low=c node-oom=u memory-leak=u")],
     "application", ["application"], ["oom-killed/memory-leak"]),
    ("likely-is-still-open",
     [_finding("latency", "dns=l cpu-throttling=r capacity=r")], "network", ["network"], ["latency/dns"]),
    ("ruled-out-opens-nothing",
     [_finding("gpu-xid", "gpu-fallen-off-bus=r app-memory-fault=r")], None, [], []),
    ("a-generic-nccl-timeout-leaves-every-layer-open-in-order",
     [_finding("nccl-hang", "straggler-rank=u rank-not-running=u stuck-process=u network-blocked=u gpu-hardware=u")],
     "application", list(ORDER), ["nccl-hang/straggler-rank"]),
    ("the-network-layer-once-the-app-and-pod-are-ruled-out",
     [_finding("service-unreachable", "no-ready-endpoints=r port-mismatch=r dns=u network-policy=u")],
     "network", ["network"], ["service-unreachable/dns", "service-unreachable/network-policy"]),
    ("context-about-other-workloads-opens-nothing",
     [_finding("node-not-ready", "gpu-fault=c"), _finding("crash-loop", "app-error=u", aside="also on this node")],
     None, [], []),
    ("a-confirmed-lead-explains-a-finding-with-no-support-of-its-own",
     [_finding("gpu-xid", "gpu-fallen-off-bus=c"), _finding("crash-loop", "app-error=u gpu-fault=u")], None, [], []),
    ("a-second-supported-symptom-keeps-its-own-open-layers",
     [_finding("gpu-xid", "gpu-fallen-off-bus=c"), _finding("crash-loop", "app-error=u gpu-fault=l")],
     "application", ["application", "gpu"], ["crash-loop/app-error"]),
    ("an-unlayered-hypothesis-opens-nothing",
     [_finding("oom-killed", "limit-too-low=c brand-new-cause=u")], None, [], []),
]


@pytest.mark.parametrize(("findings", "first", "still", "named"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_findings_in_question_out(findings: list[Finding], first: str | None, still: list[str],
                                  named: list[str]) -> None:
    assert list(open_hypotheses(findings)) == still
    question = narrowing(findings, SUBJECT)
    if first is None:
        assert question is None
        return
    assert question is not None
    assert (question.layer, question.open, question.hypotheses) == (first, still, named)
    assert question.question.endswith("?") and question.source
    assert "<" not in question.check  # every name came from the subject


def test_a_pointer_joined_to_another_finding_is_that_findings_to_open() -> None:
    pointer = _finding("crash-loop", "oom-loop=u app-error=r", merged="oom-killed")
    assert open_hypotheses([pointer]) == {}
    confirmed = _finding("crash-loop", "oom-loop=c app-error=r liveness-probe-kill=u", merged="oom-killed")
    assert open_hypotheses([confirmed]) == {}  # joined, it still explains its own symptom


def test_the_checks_name_the_subject_like_next_checks_do() -> None:
    by_layer = {q.layer: q for q in (narrowing([_finding("nccl-hang", f"{h}=u")], SUBJECT)
                                     for h in ("straggler-rank", "rank-not-running", "stuck-process",
                                               "network-blocked", "gpu-hardware")) if q is not None}
    assert by_layer["application"].check == "kubectl logs trainer-0 -n ml --all-containers --tail=200"
    assert by_layer["pod"].check == "kubectl describe pod trainer-0 -n ml"
    assert by_layer["node"].check.startswith("kubectl debug node/gpu-node-7 ")
    assert by_layer["gpu"].check.endswith("chroot /host nvidia-smi -q -d ECC,PERFORMANCE")
    service_only = narrowing([_finding("latency", "capacity=u")], {"service": "embed api", "namespace": "search"})
    assert service_only is not None and service_only.check.startswith("kubectl logs deploy/'embed api' -n search ")


def test_every_hypothesis_of_every_playbook_has_exactly_one_layer() -> None:
    specs = load_layers()
    assert [s.layer for s in specs] == list(ORDER)
    assert layer_problems(default_playbooks()) == []
    every = {(p.spec.id, h.id) for p in default_playbooks() for h, _ in p.spec.walk()}
    placed = [pair for s in specs for pair in s.hypotheses]
    assert sorted(placed) == sorted(every)


def test_lint_warns_of_a_missing_layer_and_refuses_a_stale_id(tmp_path: Path) -> None:
    text = LAYERS_FILE.read_text(encoding="utf-8")
    path = tmp_path / "layers.yaml"
    path.write_text(text.replace("app-error, ", "").replace("[gpu-fault]\n      error-rate",
                                                           "[gpu-fault, gpu-faults]\n      error-rate", 1),
                    encoding="utf-8")
    problems = [(p.severity, p.message) for p in layer_problems(default_playbooks(), path)]
    assert ("warning", "crash-loop/app-error has no layer; add it to one of application, pod, node, network, "
            "gpu") in problems
    assert ("error", "crash-loop/gpu-faults is not a hypothesis of crash-loop") in problems
    assert len(problems) == 2


# The two side files the engine asks its questions from: layers.yaml (narrowing) and scope.yaml (scope).
@pytest.mark.parametrize(("load", "name", "text"), [
    (load_layers, "layers.yaml", "layers: nope\n"),
    (load_layers, "layers.yaml", "layers:\n  - {layer: street, question: q?, check: c}\n"),
    (load_layers, "layers.yaml", "layers:\n  - {layer: pod, question: q?, check: c}\n"),
    (load_layers, "layers.yaml", "layers:\n  - {layer: application, question: q?, check: '{{ pod|nosuch }}'}\n"),
    (load_questions, "scope.yaml", "levels: nope\n"),
    (load_questions, "scope.yaml", "levels:\n  - {level: street, question: q, yes_if: 'true', no_if: 'false'}\n"),
    (load_questions, "scope.yaml", "levels:\n  - {level: pod, question: q, yes_if: 'true', no_if: 'false'}\n"),
])
def test_a_malformed_file_is_refused(tmp_path: Path, load: Callable[[Path], object], name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError):
        load(path)


def test_a_hypothesis_in_two_layers_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "layers.yaml"
    path.write_text(LAYERS_FILE.read_text(encoding="utf-8").replace(
        "crash-loop: [failures-on-one-node]", "crash-loop: [failures-on-one-node, app-error]"), encoding="utf-8")
    with pytest.raises(ValueError, match="crash-loop/app-error is in both application and node"):
        load_layers(path)


def test_a_recorded_incident_asks_the_question_in_every_renderer() -> None:
    """End to end: a pending pod whose GPU cause is confirmed, while three pod-layer causes are still unknown."""
    report = replay(load_incident(INCIDENT_DIR / "pending-gpu-fragmentation"))
    assert report.narrowing is not None
    assert (report.narrowing.layer, report.narrowing.open) == ("pod", ["pod"])
    check = "kubectl describe pod mixtral-lora-ft-q8w2z -n nlp"
    assert report.narrowing.check == check
    line = ("Still open: the pod layer. Did Kubernetes or the container runtime hold, kill or restart the pod (its "
            "events, last state, probes)? One check closes it:")
    assert f"{line}\n  {check}\n" in render_text(report, width=400)
    assert f"## Narrowing\n\n{line}\n\n```\n{check}\n```\n" in render_markdown(report)
    slack = [b for b in blocks_json(report) if ":mag:" in b.get("text", {}).get("text", "")]
    assert len(slack) == 1 and slack[0]["text"]["text"] == f":mag: *{line}*\n```\n{check}\n```"
    data = json.loads(report.to_json())
    assert data["narrowing"]["layer"] == "pod" and data["narrowing"]["check"] == check
    assert "pending/node-affinity" in data["narrowing"]["hypotheses"]


def test_not_shown_when_a_confirmed_cause_leaves_nothing_open() -> None:
    report = replay(load_incident(INCIDENT_DIR / "oom-trainer-limit"))
    lead = report.leading()
    assert lead is not None and lead[1].status == "confirmed"
    assert report.narrowing is None
    assert "Still open" not in render_text(report, width=200)
    assert "## Narrowing" not in render_markdown(report)
    assert not [b for b in blocks_json(report) if ":mag:" in b.get("text", {}).get("text", "")]
    assert json.loads(report.to_json())["narrowing"] is None
