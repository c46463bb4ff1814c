"""Reading a paste is linear in its size whatever order its kinds come in (issue #24, point 5).

No timings: the tests count what makes the work grow. Every artifact is parsed in full, so the characters held by
all the artifacts of a paste bound the parsing; they must stay within a small multiple of the paste however its
kinds interleave (one artifact per segment, each as long as the paste, made an interleaved log quadratic).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from collectors.detect import SNIFF_CHARS
from collectors.models import ArtifactKind, Target
from collectors.parsers.registry import SNIFFERS, parse_artifact
from collectors.paste import artifacts_from_text
from drills.recorded.incident import load_incident
from drills.recorded.record import write_incident

# Synthetic lines in the shapes the readers claim (property-style inputs, not evidence).
NCCL = "trainer-0:4242:4242 [0] NCCL INFO Channel 00/02 :    0   1   2   3"
KERNEL = "[1000.068952] IPv6: ADDRCONF(NETDEV_CHANGE): cali28140: link becomes ready"
KUBELET = "I1122 06:01:02.123456    1234 kubelet.go:2345] \"SyncLoop (PLEG): event for pod\" pod=\"shop/web-1\""
DESCRIBE = "Events:\n  Type     Reason   Age  From     Message\n  ----     ------   ---  ----     -------\n" \
           "  Warning  BackOff  3m   kubelet  Back-off restarting failed container app in pod web-1"
CONNTRACK = "cpu=0   \tfound=0 invalid=0 insert=0 insert_failed=3 drop=3 early_drop=0 error=0 search_restart=0"


def _orders(n: int) -> dict[str, str]:
    """The same lines in several orders: grouped by kind, and interleaved in the ways that went quadratic."""
    return {
        "nccl first, kernel interleaved": "\n".join(NCCL if i % 2 == 0 else KERNEL for i in range(n)),
        "three log kinds alternating": "\n".join((NCCL, KERNEL, KUBELET)[i % 3] for i in range(n)),
        "describe blocks between log lines": "\n\n".join(DESCRIBE if i % 2 else KERNEL for i in range(n // 4)),
        "small structured kinds alternating": "\n\n".join((DESCRIBE, CONNTRACK, KERNEL)[i % 3] for i in range(n // 4)),
    }


def _held(text: str) -> tuple[int, int]:
    """How many artifacts a paste becomes, and how many characters they hold between them."""
    artifacts = artifacts_from_text(text, "paste")
    return len(artifacts), sum(len(a.content) for a in artifacts)


@pytest.mark.parametrize("order", list(_orders(8)))
def test_artifacts_hold_a_bounded_multiple_of_the_paste_in_any_order(order: str) -> None:
    small, large = _orders(400)[order], _orders(1600)[order]
    (_, held_small), (count_large, held_large) = _held(small), _held(large)
    # Each log kind, and each kind whose parser reads many blocks, is one artifact: segments never multiply them.
    assert count_large <= 5
    # Content grows with the paste, not with the paste times its segments: at most the paste once per log kind
    # (blank lines keep the numbering) plus the structured pieces, each only as long as itself.
    assert held_large <= 5 * len(large)
    assert held_large <= 5 * held_small


def test_an_interleaved_log_reads_like_the_same_lines_grouped() -> None:
    nccl_first = "\n".join(NCCL if i % 2 == 0 else KERNEL for i in range(200))
    kernel_first = "\n".join(KERNEL if i % 2 == 0 else NCCL for i in range(200))  # starts with "[", like JSON
    grouped = "\n".join([NCCL] * 100 + [KERNEL] * 100)
    kinds = [sorted(a.kind for a in artifacts_from_text(text, "paste")) for text in (nccl_first, kernel_first, grouped)]
    assert kinds[0] == kinds[1] == kinds[2] == sorted([ArtifactKind.KERNEL_LOG, ArtifactKind.CONTAINER_LOG])


def test_a_piece_cut_from_a_paste_cites_the_paste_lines() -> None:
    text = "\n".join(["some prose", "", DESCRIBE, "", KERNEL, KERNEL])
    artifacts = artifacts_from_text(text, "paste")
    events = next(a for a in artifacts if a.kind == ArtifactKind.EVENTS or a.kind == ArtifactKind.DESCRIBE_POD)
    assert events.first_line == 3 and events.content.startswith("Events:")
    cited = {f.citation.start for f in parse_artifact(events).facts if f.citation.start}
    lines = text.split("\n")
    assert cited and all("BackOff" in lines[n - 1] for n in cited)


def test_a_recorded_paste_replays_with_the_same_citations(tmp_path: Path) -> None:
    text = "\n".join(["$ kubectl describe pod web-1", DESCRIBE, "", "$ dmesg", KERNEL,
                      "[1001.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus."])
    artifacts = artifacts_from_text(text, "paste")
    assert any(a.first_line > 1 for a in artifacts)
    folder = write_incident(tmp_path / "rec", artifacts, Target(), datetime(2026, 11, 28, tzinfo=UTC), page="p",
                            title="t", missing=[])
    replayed = load_incident(folder).artifacts

    def facts(items: list) -> list[tuple[str, str, int, int]]:
        return sorted((f.name, repr(f.value), f.citation.start, f.citation.end)
                      for a in items for f in parse_artifact(a).facts)

    assert facts(replayed) == facts(artifacts)
    xid = text.split("\n").index(next(line for line in text.split("\n") if "Xid" in line)) + 1
    assert ("xid.codes", "[79]", xid, xid) in facts(artifacts)


@pytest.mark.parametrize("head", [
    KERNEL + "\n", NCCL + "\n", DESCRIBE + "\n\n", '{"kind": "Pod", "apiVersion": "v1", "status": {}}\n',
    "nr_periods 100\nnr_throttled 3\n",
], ids=["kernel", "nccl", "events", "json", "cpu.stat"])
def test_no_sniffer_reads_past_the_characters_detection_joins(head: str) -> None:
    # Detection joins a block only SNIFF_CHARS far: what follows must not change any sniffer's score.
    text = head * (SNIFF_CHARS // len(head) + 1)
    for kind, sniff in SNIFFERS.items():
        assert sniff(text) == sniff(text + DESCRIBE + "\n" + NCCL + "\n" + "}" * 100), kind


def test_yaml_documents_apart_keep_an_artifact_each_and_are_both_read() -> None:
    # A YAML loader reads one document: two pods that a log line separates are not merged into one text.
    pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: shop\nstatus:\n  phase: Pending"
    text = "\n\n".join([pod.format(name="a"), KERNEL, pod.format(name="b")])
    artifacts = artifacts_from_text(text, "paste")
    assert [a.kind for a in artifacts].count(ArtifactKind.K8S_OBJECT) == 2
    names = {f.value for a in artifacts for f in parse_artifact(a).facts if f.name == "pod.name"}
    assert names == {"a", "b"}
