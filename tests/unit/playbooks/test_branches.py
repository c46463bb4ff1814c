"""docs/playbooks.md maps every branch of the source documents' trees to a hypothesis that exists.

BRANCHES is the digest's list (shared/research/seed-digest.md: the hypothesis tables of §1.1-§1.8, the scale-out
drill of §1.10, the storage trees D3-D5). A branch added to the documents is added here, and then fails until
the table names the hypothesis that encodes it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from playbooks.loader import load_playbooks
from playbooks.templates import render

DOC = Path(__file__).resolve().parents[3] / "docs" / "playbooks.md"


def _ids(section: str, prefix: str, count: int, *extra: str) -> list[str]:
    return [f"{section} {prefix}{n}" for n in range(1, count + 1)] + [f"{section} {e}" for e in extra]


BRANCHES: frozenset[str] = frozenset(
    _ids("§1.1", "M", 6, "M1a", "M5(a)", "M5(b)", "M5(c)", "M5(d)")
    + _ids("§1.2", "P", 9, "P1a", "P1b")
    + _ids("§1.3", "L", 14, "L1a")
    + _ids("§1.4", "N", 12)
    + _ids("§1.5", "X", 8)
    + _ids("§1.6", "U", 13)
    + _ids("§1.7", "C", 6)
    + _ids("§1.8", "I", 8)
    + [f"§1.10 {b}" for b in ("artifact-download", "image-pull", "warmup", "discovery", "readiness", "cpu-disk")]
    + ["D3 binding", "D4 multi-attach", "D4 csi-controller", "D4 csi-node", "D4 objects", "D4 security-context",
       "D5 terminating"])
_HYPOTHESIS = re.compile(r"`([a-z0-9-]+)/([a-z0-9-]+)`")


def table() -> dict[str, list[tuple[str, str]]]:
    """Each row's branch and the (playbook, hypothesis) pairs it names."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## The documents' branches\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[tuple[str, str]]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("branch", "---"):
            assert cells[0] not in rows, f"{cells[0]} is listed twice"
            rows[cells[0]] = _HYPOTHESIS.findall(cells[2])
    return rows


def test_every_branch_of_the_documents_is_in_the_table_and_nothing_else() -> None:
    rows = table()
    assert sorted(BRANCHES - set(rows)) == []
    assert sorted(set(rows) - BRANCHES) == []


def test_every_branch_names_hypotheses_that_exist() -> None:
    known = {(book.spec.id, h.id) for book in load_playbooks() for h, _ in book.spec.walk()}
    rows = table()
    assert [b for b, hyps in rows.items() if not hyps] == []
    assert sorted((b, f"{p}/{h}") for b, hyps in rows.items() for p, h in hyps if (p, h) not in known) == []


@pytest.mark.parametrize(("branch", "hypothesis"), [
    ("§1.6 U10", ("gpu-underutilized", "gradient-sync")),
    ("§1.6 U12", ("gpu-underutilized", "clocks-not-ramping")),
    ("D4 security-context", ("container-creating", "volume-permissions")),
    ("§1.10 discovery", ("latency", "discovery-lag")),
    ("§1.10 cpu-disk", ("latency", "load-saturation")),
])
def test_the_branches_issue_29_found_uncovered_are_encoded(branch: str, hypothesis: tuple[str, str]) -> None:
    assert hypothesis in table()[branch]


# Commands the documents give (seed-digest §1.1 M2, §1.3 L3, L6, L9, §1.4 N3, N9, N10), each a next check of the
# hypothesis it tests, with the subject's names filled in.
DOCUMENT_COMMANDS = [
    ("oom-killed", "node-oom", "grep -i oom /var/log/syslog"),
    ("oom-killed", "node-oom", "free -m"),
    ("latency", "dns", "dig checkout.shop.svc.cluster.local"),
    ("latency", "network-path", "--resolve checkout.shop.svc.cluster.local:443:"),
    ("latency", "noisy-neighbor", "uptime"),
    ("service-unreachable", "dns", "dig +search +stats checkout.shop.svc.cluster.local"),
    ("nccl-hang", "master-unresolvable", "dig +search"),
    ("nccl-hang", "stuck-process", "strace -f -tt -p 1"),
    ("nccl-hang", "gpu-hardware", "nvidia-smi nvlink -e"),
    ("latency", "discovery-lag", "dig +search checkout.shop.svc.cluster.local"),
]


@pytest.mark.parametrize(("playbook", "hypothesis", "command"), DOCUMENT_COMMANDS)
def test_the_documents_commands_are_next_checks(playbook: str, hypothesis: str, command: str) -> None:
    book = next(b for b in load_playbooks() if b.spec.id == playbook)
    h = next(h for h, _ in book.spec.walk() if h.id == hypothesis)
    names = {"service": "checkout", "namespace": "shop", "pod": "checkout-7d9f", "node": "gpu-node-7",
             "node_instance": "gpu-node-7", "container": "server", "cluster": None, "facts": {}}
    rendered = [render(check, names) for check in h.next_checks]
    assert any(command in check for check in rendered), rendered


def test_every_hypothesis_that_can_only_be_likely_says_what_would_confirm_it() -> None:
    # Issue 29, point 2: where the documents name the confirming observation the note names it and why it is not
    # read; where they name none, the note says so. A hypothesis with a `confirm` needs no note.
    missing, needless = [], []
    for book in load_playbooks():
        for h, _ in book.spec.walk():
            if h.see:
                continue
            if h.confirm is None and h.likely is not None and not h.confirm_note:
                missing.append(f"{book.spec.id}/{h.id}")
            if h.confirm is not None and h.confirm_note:
                needless.append(f"{book.spec.id}/{h.id}")
    assert missing == []
    assert needless == []
