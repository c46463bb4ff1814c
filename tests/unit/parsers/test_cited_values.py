"""No wrong facts: a fact that reads a value off the text cites a line on which that value is written.

Runs over every real-world paste, every parser fixture and every recorded incident. Facts whose value is derived
(normalised reasons, ratios, sums, booleans) are not literal and are checked by their own parser tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from collectors.catalogs.stated import stated_terms
from collectors.models import Artifact, Fact
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
from drills.recorded.incident import incident_dirs, load_incident

TESTS = Path(__file__).resolve().parents[2]
# Facts whose value is copied from the text as it is written.
LITERAL = {
    "container.last_terminated.reason", "container.last_terminated.exit_code", "container.waiting.reason",
    "container.restart_count", "container.name", "pod.phase", "pod.status.reason", "pod.name", "pod.namespace",
    "node.name", "nccl.version", "nccl.socket_ifname", "nccl.timeout_op", "scheduling.nodes_total", "xid.codes",
    "cpu.nr_throttled", "cpu.nr_periods", "events.reasons", "pods.names", "kernel.oom_victims",
    "alert.names", "hpa.max_replicas", "dist.master_addrs", "nccl.last_completed_seq", "nccl.suspect_hosts",
    "nccl.waiting_ranks", "nccl.suspect_ranks",
}


def _artifacts() -> Iterator[tuple[str, Artifact]]:
    for path in sorted((TESTS / "realworld").rglob("evidence.txt")):
        text = path.read_bytes().decode("utf-8", errors="replace")
        for artifact in artifacts_from_text(text, path.parent.name):
            yield f"realworld/{path.parent.parent.name}/{path.parent.name}", artifact
    for path in sorted((TESTS / "fixtures" / "parsers").rglob("*")):
        if path.is_file() and path.stat().st_size < 2_000_000:
            text = path.read_bytes().decode("utf-8", errors="replace")
            if text.strip():
                for artifact in artifacts_from_text(text, path.name, source="file"):
                    yield f"fixtures/{path.relative_to(TESTS / 'fixtures' / 'parsers')}", artifact
    for folder in incident_dirs():
        for artifact in load_incident(folder).artifacts:
            if artifact.unavailable is None:
                yield f"incident/{folder.name}", artifact


def _cited(artifact: Artifact, fact: Fact) -> str:
    lines = artifact.content.split("\n")  # citations count the source's lines; the content starts at first_line
    return "\n".join(lines[fact.citation.start - artifact.first_line: fact.citation.end - artifact.first_line + 1])


def _spelt(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch not in " -")


# Stated entries whose value is the kind the words stand for, not the words (stated.yaml `value:`).
_NORMALISED = {t.spec.id for t in stated_terms() if t.spec.value is not None}


def _wrong(artifact: Artifact) -> list[str]:
    wrong: list[str] = []
    facts = parse_artifact(artifact).facts
    # A silent rank is named because no line of it was printed: no line can hold its number.
    silent = {rank for f in facts if f.name == "nccl.silent_ranks" for rank in f.value}
    for fact in facts:
        if fact.name not in LITERAL or fact.citation.start == 0 or fact.citation.artifact != artifact.id:
            continue
        if fact.name == "nccl.suspect_ranks" and set(fact.value) <= silent:
            continue
        text = _cited(artifact, fact)
        values = fact.value if isinstance(fact.value, list) else [fact.value]
        if fact.parser.removeprefix("stated:") in _NORMALISED:  # "OOMs" says OOMKilled in other words
            continue
        if fact.parser.startswith("stated:"):  # a term spelt in words: "crash loop backoff" states CrashLoopBackOff
            missing = [v for v in values if _spelt(str(v)) not in _spelt(text)]
        else:
            missing = [v for v in values if str(v) not in text]
        if missing:
            wrong.append(f"{fact.name}={missing} not on {artifact.id}:{fact.citation.start}-{fact.citation.end}")
    return wrong


CASES = list(_artifacts())


@pytest.mark.parametrize(("where", "artifact"), CASES, ids=[f"{w}:{a.id}" for w, a in CASES])
def test_every_literal_fact_cites_a_line_holding_its_value(where: str, artifact: Artifact) -> None:
    assert not _wrong(artifact), where


def test_the_check_catches_a_wrong_citation() -> None:
    artifact = artifacts_from_text("Last State:     Terminated\n  Reason:       OOMKilled\n  Exit Code:    137\n",
                                   "x")[0]
    good = parse_artifact(artifact).facts
    assert any(f.name == "container.last_terminated.exit_code" for f in good) and not _wrong(artifact)
    moved = replace(artifact, content="\n".join(reversed(artifact.content.split("\n"))))
    # The same facts cited to lines that now hold other text would be caught.
    bad = [f for f in good if f.name in LITERAL and str(f.value) not in _cited(moved, f)]
    assert bad
