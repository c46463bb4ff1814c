"""The report's trace: which rule decided each status (file, line, CEL), and which parser read each fact."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from drills.recorded.incident import incident_dirs, load_incident
from drills.recorded.replay import replay

ROOT = Path(__file__).resolve().parents[3]


def _incident(name: str) -> Path:
    return next(d for d in incident_dirs() if d.name == name)


def test_every_decided_status_names_the_rule_as_written() -> None:
    checked = 0
    for folder in incident_dirs()[:10]:
        for finding in replay(load_incident(folder)).findings:
            for h in finding.hypotheses:
                if h.decided_by is None:
                    assert h.rule is None and h.status == "unknown"
                    continue
                assert h.rule is not None
                line = (ROOT / h.rule.file).read_text(encoding="utf-8").split("\n")[h.rule.line - 1]
                assert line.strip().startswith(f"{h.decided_by}:"), (h.rule, line)
                # The CEL shown is the rule's text with its line breaks folded.
                assert h.rule.cel.split()[0] in (ROOT / h.rule.file).read_text(encoding="utf-8")
                checked += 1
    assert checked > 20


def test_every_cited_fact_says_what_read_it() -> None:
    report = replay(load_incident(_incident("oom-trainer-limit")))
    lead = report.leading()
    assert lead is not None
    # The lead (host-memory-underestimated) and what supports it (limit-too-low): every line either cites.
    by_fact = {e.fact: e for h in (lead[1], *report.supporting()) for e in h.evidence}
    assert by_fact["pod.gpu_request"].parser == "describe_pod"
    reason = by_fact["container.last_terminated.reason"]
    assert (reason.parser, reason.kind) == ("describe_pod", "describe-pod")
    assert by_fact["kernel.oom_memcg"].parser == "kernel" and by_fact["kernel.oom_memcg"].kind == "kernel-log"


def test_a_line_signal_is_named_as_the_reader() -> None:
    from collectors.paste import artifacts_from_text
    from playbooks.pipeline import analyse

    # A scheduler message quoted in a YAML value (kubernetes/kubernetes#49896 pasted the whole status block).
    report = analyse(artifacts_from_text("  message: '0/10 nodes are available: 10 node(s) didn''t match node "
                                         "selector, 4 Insufficient cpu.'\n", "paste"))
    evidence = {e.fact: e for f in report.findings for h in f.hypotheses for e in h.evidence}
    reasons = evidence["scheduling.reasons"]
    assert reasons.parser == "signal:scheduler-nodes-available" and reasons.kind == "text"


def test_explain_shows_the_trace_in_the_terminal() -> None:
    replay = [sys.executable, "-m", "bot.cli", "replay", str(_incident("oom-trainer-limit"))]
    # Both runs at once: each is mostly interpreter start-up, and CI has two cores.
    explained = subprocess.Popen([*replay, "--explain"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 cwd=ROOT, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    plain = subprocess.Popen(replay, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    out, err = explained.communicate(timeout=300)
    plain_out, _ = plain.communicate(timeout=300)
    assert explained.returncode == 0, err
    assert "How it was decided (--explain)" in out
    assert "decided by confirm at playbooks/oom-killed.yaml:" in out
    assert "read by kernel from dmesg.txt:121 (kernel-log)" in out
    assert "How it was decided" not in plain_out
