"""Renderers show the same report: the leader, its evidence, the falsifier, checks, and the rest."""

from __future__ import annotations

from bot.render.markdown import render_markdown
from bot.render.terminal import render_text
from playbooks.report import ArtifactRef, Finding, HypothesisResult, Missing, Report, Target


def report() -> Report:
    lead = HypothesisResult(
        id="gpu-fallen-off-bus", status="confirmed", score=0.98, claim="GPU 0000:2b:00 fell off the bus",
        because=["xid.codes = [79, 45] (dmesg.txt:3)"], falsified_by="nvidia-smi still lists the GPU",
        next_checks=["kubectl describe node gpu-node-2"], mitigations=["Cordon and drain gpu-node-2."])
    other = HypothesisResult(id="xid-45-after-effect", status="ruled-out", score=0.02, claim="teardown only",
                             because=["xid.primary_codes = [79] (dmesg.txt:3)"], falsified_by="x")
    unknown = HypothesisResult(id="thermal-or-power", status="unknown", score=0.33, claim="too hot",
                               falsified_by="y", needs=["gpu.temp_c"])
    return Report(
        target=Target(namespace="ml", node="gpu-node-2"), symptoms=["gpu-xid"],
        findings=[Finding(playbook="gpu-xid", title="GPU Xid", hypotheses=[lead, unknown, other])],
        facts={"xid.codes": [79, 45]},
        artifacts=[ArtifactRef(id="dmesg.txt", kind="kernel-log", source="recording", command="dmesg -T")],
        missing=[Missing(source="prometheus", reason="timeout after 5s")],
    )


def test_terminal_text_keeps_brackets_and_sections() -> None:
    text = render_text(report(), width=160)
    for needle in ("gpu-xid: gpu-fallen-off-bus (confirmed, 0.98)", "xid.codes = [79, 45] (dmesg.txt:3)",
                   "Would be falsified by:", "nvidia-smi still lists the GPU", "> kubectl describe node gpu-node-2",
                   "xid.primary_codes = [79]", "needs gpu.temp_c", "prometheus: timeout after 5s"):
        assert needle in text, needle


def test_markdown_sections_and_escaping() -> None:
    md = render_markdown(report())
    assert md.startswith("# Triage: namespace=ml node=gpu-node-2\n")
    assert "- `xid.codes = [79, 45] (dmesg.txt:3)`" in md
    assert "| gpu-xid | thermal-or-power | ? unknown | 0.33 | needs gpu.temp_c |" in md
    assert "## Missing evidence\n\n- prometheus: timeout after 5s" in md


def test_no_findings_headline() -> None:
    empty = Report(target=Target(), symptoms=[], findings=[], facts={"pod.phase": "Running"}, artifacts=[])
    assert "No playbook matched this evidence." in render_text(empty)
    nothing = Report(target=Target(), symptoms=[], findings=[], facts={}, artifacts=[], notes=["Looked for X."])
    text = render_text(nothing)
    assert "Nothing in this evidence was recognised." in text
    assert "Looked for X." in text


def test_a_report_from_the_watch_cache_says_how_old_it_was_everywhere() -> None:
    from bot.render.slack import blocks_json
    from playbooks.report import CacheState

    plain = report()
    cached = report().model_copy(update={"cache": CacheState(age_seconds=12.4, namespaces=["ml", "shop"])})
    line = "Cluster objects from the watch cache (ml, shop), 12s old"
    assert line in render_text(cached, width=160) and line not in render_text(plain, width=160)
    assert f"_{line}_" in render_markdown(cached) and "watch cache" not in render_markdown(plain)
    assert line in str(blocks_json(cached)) and "watch cache" not in str(blocks_json(plain))
    doc = cached.model_dump(mode="json")
    assert doc["cache"] == {"age_seconds": 12.4, "namespaces": ["ml", "shop"]}
    assert plain.model_dump(mode="json")["cache"] is None
    every_namespace = report().model_copy(update={"cache": CacheState(age_seconds=0.0)})
    assert "(all namespaces), 0s old" in render_markdown(every_namespace)
