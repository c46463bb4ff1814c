"""Events weighed by their age, not by where a paste put them: k9s and `--sort-by` print rows in any order, so a
failure printed after the placement but seen before it does not reopen the wait (collectors/k8s_values.age_seconds,
k8s_event_facts._before)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.k8s_values import age_seconds
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes.k8s_event_rows import row_age
from collectors.parsers.registry import parse_artifact

# https://github.com/MicrosoftDocs/azure-docs/issues/95667 (the events copied from k9s, borders kept), kept verbatim
# in the real-world case: the autoscaler's NotTriggerScaleUp (4m30s ago) is printed after Scheduled (4m21s ago) but
# happened before it.
K9S_EVENTS = (Path(__file__).parents[2] / "realworld/container-creating"
              / "azure-docs-95667-k9s-events-static-azure-disk-mount-timeout/evidence.txt").read_text()


@pytest.mark.parametrize(("cell", "seconds"), [
    # The shapes of k8s.io/apimachinery's duration.HumanDuration, and describe's "last (xN over first)".
    ("22s", 22), ("4m36s", 276), ("12m", 720), ("3h12m", 11520), ("5d", 432000), ("2d3h", 183600),
    ("3y45d", 3 * 365 * 86400 + 45 * 86400), ("2m (x3 over 12m)", 120),
    ("<unknown>", None), ("<invalid>", None), ("", None), ("Normal", None), ("4m36", None),
])
def test_age_cells(cell: str, seconds: int | None) -> None:
    assert age_seconds(cell) == seconds


@pytest.mark.parametrize("kind", [ArtifactKind.EVENTS, ArtifactKind.TEXT])  # the events reader; line signals
def test_a_failure_seen_before_the_placement_does_not_reopen_the_wait(kind: ArtifactKind) -> None:
    result = parse_artifact(Artifact(id="p", kind=kind, content=K9S_EVENTS))
    facts = {f.name: f.value for f in result.facts}
    assert facts.get("scheduling.resolved") is True
    assert facts["scheduling.reasons"] == ["unbound-pvc"]  # the wait happened; it is over
    assert facts["volume.errors"] == ["mount-timeout"]  # what holds the pod now


@pytest.mark.parametrize(("line", "seconds"), [
    (K9S_EVENTS.splitlines()[2], 4 * 60 + 21),  # framed by k9s
    (K9S_EVENTS.splitlines()[2].lstrip("│ "), 4 * 60 + 21),  # as describe prints it
    ("Successfully assigned default/mypod to XXX", None),  # a message alone has no age
])
def test_row_age(line: str, seconds: int | None) -> None:
    assert row_age(line) == seconds
