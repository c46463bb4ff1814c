"""Kind detection and splitting of messy pastes: several kinds, prompts, CRLF, colours."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.detect import detect_kind, split
from collectors.models import ArtifactKind
from collectors.paste import PasteError, artifacts_from_text
from collectors.text import normalise
from playbooks.pipeline import analyse

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MIXED = (FIXTURES / "paste" / "mixed-session.txt").read_text(encoding="utf-8")


def test_a_terminal_session_splits_into_its_kinds() -> None:
    got = [(s.kind, s.start, s.end) for s in split(MIXED)]
    assert got == [
        (ArtifactKind.DESCRIBE_POD, 2, 16),
        (ArtifactKind.KERNEL_LOG, 19, 20),
        (ArtifactKind.NCCL_LOG, 22, 23),
        (ArtifactKind.CONNTRACK_STATS, 25, 26),
    ]


def test_crlf_and_ansi_colours_do_not_change_the_split() -> None:
    coloured = MIXED.replace("OOMKilled", "\x1b[31mOOMKilled\x1b[0m").replace("\n", "\r\n")
    assert split(coloured) == split(MIXED)


def test_colours_as_rsyslog_escapes_them_are_taken_off() -> None:
    # rsyslog writes the escape byte as "#033" (vllm-project/vllm#1160: "#033[2m#033[33m(raylet)#033[0m").
    assert normalise("#033[2m#033[33m(raylet)#033[0m node_manager.cc:3007") == "(raylet) node_manager.cc:3007"
    assert normalise("issue #0334 [x]") == "issue #0334 [x]"


def test_citations_keep_the_paste_line_numbers() -> None:
    report = analyse(artifacts_from_text(MIXED, "paste"))
    assert [a.id for a in report.artifacts] == ["paste#1", "paste#2", "paste#3", "paste#4"]
    assert report.facts["xid.codes"] == [79]
    assert report.facts["conntrack.drops"] == 6  # insert_failed 3 + drop 3 on cpu 0
    assert report.facts["nccl.socket_ifname"] == "eth0"
    oom = next(f for f in report.findings if f.playbook == "oom-killed")
    cited = {(e.fact, e.artifact, e.lines) for h in oom.hypotheses for e in h.evidence}
    assert ("container.last_terminated.reason", "paste#1", "10") in cited


def test_logs_glued_to_a_describe_without_a_blank_line_are_peeled_off() -> None:
    describe = MIXED.split("\n\n")[0].split("\n", 1)[1]
    glued = describe + "\n[12.5] NVRM: Xid (PCI:0000:3b:00): 48, pid=77, name=python, An uncorrectable ECC error"
    assert [s.kind for s in split(glued)] == [ArtifactKind.DESCRIBE_POD, ArtifactKind.KERNEL_LOG]


def test_yaml_documents_with_blank_lines_stay_one_segment() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n\nstatus:\n  phase: Pending\n"
    assert [(s.kind, s.start, s.end) for s in split(text)] == [(ArtifactKind.K8S_OBJECT, 1, 7)]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('{"version":"4","status":"firing","groupKey":"{}:{}",'
         '"alerts":[{"labels":{"alertname":"GPUXidError"}}]}', ArtifactKind.ALERTMANAGER),
        ('{"status":"success","data":{"resultType":"vector","result":[]}}', ArtifactKind.PROMETHEUS_QUERY),
        ("nr_periods 100\nnr_throttled 0\nthrottled_usec 0\n", ArtifactKind.CPU_STAT),
        ("Nov 22 03:01:02 gpu-node-2 kernel: NVRM: Xid (PCI:0000:2b:00): 79, pid=1, GPU has fallen off the bus",
         ArtifactKind.KERNEL_LOG),
        ("lorem ipsum dolor", None),
    ],
)
def test_detect_kind(text: str, kind: ArtifactKind | None) -> None:
    assert detect_kind(text) == kind


def test_empty_pastes_raise_and_unknown_text_is_read_as_text() -> None:
    with pytest.raises(PasteError, match="is empty"):
        artifacts_from_text(" \n\t", "paste")
    [only] = artifacts_from_text("hello\nworld", "paste")
    assert (only.kind, only.content) == (ArtifactKind.TEXT, "hello\nworld")
