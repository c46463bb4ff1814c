"""What is said weighs less than what is shown, and playbooks run on the facts that tell their causes apart.

A hypothesis whose rule holds only because of facts a person wrote in words (parser `stated:`) is likely at most,
and such a fact rules nothing out on its own (playbooks/engine.py). A playbook also runs when one of its top-level
hypotheses is likely on a discriminating fact only it declares (playbooks/loader.py derived_trigger).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.main import main
from bot.render.terminal import render_text
from collectors.models import Artifact, ArtifactKind
from playbooks.loader import check_file, shared_facts
from playbooks.pipeline import analyse, default_playbooks


def _paste(text: str) -> Artifact:
    return Artifact(id="p", kind=ArtifactKind.TEXT, source="paste", content=text)


def _statuses(text: str) -> dict[str, tuple[str, str | None]]:
    report = analyse([_paste(text)])
    return {f"{f.playbook}/{h.id}": (h.status, h.note) for f in report.findings for h in f.hypotheses}


def test_an_xid_said_in_words_makes_the_lost_gpu_likely_and_the_same_line_printed_confirms_it() -> None:
    said = _statuses("We also see Xid 79 in dmesg on that node since yesterday.")
    status, note = said["gpu-xid/gpu-fallen-off-bus"]
    assert status == "likely"
    assert note is not None and note.startswith("stated in the paste, not observed")
    shown = _statuses("[ 1843.308145] NVRM: Xid (PCI:0000:b3:00): 79, pid='<unknown>', name=<unknown>, GPU has "
                      "fallen off the bus.")
    assert shown["gpu-xid/gpu-fallen-off-bus"] == ("confirmed", None)


def test_a_stated_reason_rules_nothing_out() -> None:
    said = _statuses("The training pod keeps getting OOMKilled after about 20 minutes.")
    assert said["oom-killed/limit-too-low"][0] == "likely"
    assert all(status != "ruled-out" for status, _ in said.values()), said


def test_a_negated_or_asked_term_runs_no_playbook() -> None:
    for text in ("The pod is not OOMKilled, it exits with code 0 after the job is done.",
                 "Could it be that the node is NotReady while the GPU is fine?",
                 "Maybe the pod was OOMKilled? It restarted once overnight.",
                 "We checked the node and there is no Xid 79 in dmesg at all."):
        assert analyse([_paste(text)]).findings == [], text


def test_explain_shows_the_stated_standing() -> None:
    report = analyse([_paste("The training pod keeps getting OOMKilled after about 20 minutes.")])
    text = render_text(report, explain=True)
    assert "stated in the paste, not observed" in text
    assert "stated:terminated-reason" in text


def test_facts_several_playbooks_declare_derive_no_trigger() -> None:
    shared = shared_facts([p.spec for p in default_playbooks()])
    assert {"xid.primary_codes", "gpu.fallen_off_bus", "node.conditions"} <= shared
    assert "service.selector_matches_pods" not in shared
    for playbook in default_playbooks():
        for predicate in playbook.derived:
            assert not set(predicate.facts) <= shared, (playbook.spec.id, predicate.source)
            assert not set(predicate.facts) & set(playbook.spec.not_triggering) or \
                set(predicate.facts) - set(playbook.spec.not_triggering) - shared, (playbook.spec.id, predicate.source)


def test_not_triggering_must_name_a_declared_discriminating_fact(tmp_path: Path) -> None:
    source = Path(default_playbooks()[0].path).read_text(encoding="utf-8")
    broken = tmp_path / Path(default_playbooks()[0].path).name
    broken.write_text(source.replace("\nhypotheses:", "\nnot_triggering:\n  pod.phase: a reason\nhypotheses:", 1)
                      if "not_triggering:" not in source else source.replace(
                          "not_triggering:\n", "not_triggering:\n  pod.phase: a reason\n", 1), encoding="utf-8")
    compiled, problems = check_file(broken)
    assert compiled is None
    assert any("not_triggering names 'pod.phase'" in p.message for p in problems)


def test_playbooks_show_lists_the_derived_trigger(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["playbooks", "show", "service-unreachable"]) == 0
    out = capsys.readouterr().out
    assert '  or kubelet.hairpin_mode == "none"' in out
