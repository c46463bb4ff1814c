"""`kubectl get hpa` and `kubectl describe hpa` read as an HPA: every layout in the catalog, and real pastes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from collectors.detect import detect_kind
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import hpa_text
from collectors.paste import artifacts_from_text

CATALOG: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).resolve().parents[3] / "collectors" / "catalogs" / "hpa_layouts.yaml").read_text("utf-8"))


def facts(text: str) -> dict[str, object]:
    result = hpa_text.parse(Artifact(id="a", kind=ArtifactKind.HPA, content=text))
    assert not result.problems
    return {f.name: f.value for f in result.facts}


def tabwriter(text: str) -> str:
    """Align tab-separated cells the way kubectl's tab writer does (padding 3), per block of rows."""
    rows = [line.split("\t") for line in text.splitlines()]
    widths: dict[int, int] = {}
    for cells in rows:
        if len(cells) > 1:
            for i, cell in enumerate(cells[:-1]):
                widths[i] = max(widths.get(i, 0), len(cell))
    return "\n".join("".join(c.ljust(widths[i] + 3) if i < len(cells) - 1 else c for i, c in enumerate(cells))
                     for cells in rows) + "\n"


def render(entry: dict[str, Any], replicas: int, current: str) -> str:
    text = str(entry["text"])
    if not current[0].isdigit():
        text = text.replace("{current}% (372m)", current).replace("{current}%", current)
    values = {"name": "triton", "target": "80", "current": current, "min": "2", "max": "10",
              "replicas": str(replicas), "age": "30d"}
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


@pytest.mark.parametrize("entry", CATALOG, ids=[e["id"] for e in CATALOG])
@pytest.mark.parametrize("aligned", [True, False], ids=["aligned", "tabs"])
def test_every_layout_is_read(entry: dict[str, Any], aligned: bool) -> None:
    assert entry["source"] and entry["versions"]
    for replicas, at_max in ((10, True), (4, False)):
        text = render(entry, replicas, "85")
        text = tabwriter(text) if aligned else text.replace("\t", " ")
        assert detect_kind(text) == ArtifactKind.HPA
        got = facts(text)
        assert got["hpa.max_replicas"] == 10
        if entry.get("replicas", True):
            assert got["hpa.at_max"] is at_max
        else:
            assert "hpa.at_max" not in got  # these tables print no replica count
        assert "hpa.metrics_unavailable" not in got
    if unknown := entry.get("unknown"):
        text = tabwriter(render(entry, 4, unknown))
        assert facts(text)["hpa.metrics_unavailable"] is True


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "hpa"
# Verbatim pastes (whole lines), each with where it was pasted.
REAL = [
    # https://github.com/clearlinux/cloud-native-setup/issues/5 (description): metrics-server not answering.
    ("clearlinux-5-describe-failed-get-metric.txt",
     {"hpa.max_replicas": 10, "hpa.at_max": False, "hpa.metrics_unavailable": True}),
    # https://github.com/kubernetes/kubernetes/issues/78761 (comment of 2020-10-27): a fragment, fenced inline.
    ("k8s-78761-describe-fragment-too-many-replicas.txt", {"hpa.max_replicas": 10, "hpa.at_max": True}),
    # https://github.com/kubernetes/kubernetes/issues/21649 (description): kubectl 1.1-era describe and table.
    ("k8s-21649-describe-and-get-1.1-era.txt", {"hpa.max_replicas": 10, "hpa.at_max": False}),
    # https://github.com/kubernetes/kubectl/issues/1540 (description): at its ceiling, the row cut before AGE.
    ("kubectl-1540-get-at-max-age-cut.txt", {"hpa.max_replicas": 11, "hpa.at_max": True}),
    # https://github.com/derailed/k9s/issues/1652 (description): rows not aligned with the header.
    ("k9s-1652-get-unaligned-rows.txt", {"hpa.max_replicas": 600, "hpa.at_max": True}),
    # https://github.com/maclof/kubernetes-client/pull/32 (description): the HPA block of `kubectl get all`.
    ("maclof-32-get-all-unknown-target.txt",
     {"hpa.max_replicas": 10, "hpa.at_max": False, "hpa.metrics_unavailable": True}),
    # Seed 004:1679-1697 (scenario 4): a table without its NAME column and a retyped describe, quoted as comments.
    ("seed-004-scenario-4-commented.txt", {"hpa.max_replicas": 50, "hpa.at_max": True}),
]


def pasted(text: str) -> dict[str, object]:
    """Facts of a paste as `analyze` reads it: unwrapped, split, detected; the most (max/any) of each."""
    out: dict[str, object] = {}
    for art in artifacts_from_text(text, "p"):
        if art.kind == ArtifactKind.HPA:
            for fact in hpa_text.parse(art).facts:
                old = out.get(fact.name)
                out[fact.name] = fact.value if old is None else max(old, fact.value)  # type: ignore[type-var]
    return out


@pytest.mark.parametrize(("name", "expected"), REAL, ids=[r[0] for r in REAL])
def test_real_pastes(name: str, expected: dict[str, object]) -> None:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    got = pasted(text)
    assert {k: got.get(k) for k in expected} == expected
    assert all(a.kind != ArtifactKind.DESCRIBE_POD for a in artifacts_from_text(text, "p"))


def test_the_last_row_of_a_watched_hpa_is_its_state() -> None:
    # https://github.com/kubernetes/kubernetes/issues/75247 (issue description), up to the last whole row.
    text = ("$kubectl get hpa -n uat -o wide -w \n"
            "NAME         REFERENCE           TARGETS   MINPODS   MAXPODS   REPLICAS   AGE\n"
            "test-hpa   Deployment/test   0/500m    3         15        4          150m\n")
    assert pasted(text) == {"hpa.max_replicas": 15, "hpa.at_max": False}
    assert pasted(text + "test-hpa   Deployment/test   9/500m    3         15        15         151m\n")["hpa.at_max"]


def test_too_few_replicas_is_not_the_ceiling() -> None:
    text = (FIXTURES / "k8s-78761-describe-fragment-too-many-replicas.txt").read_text(encoding="utf-8")
    text = text.replace("10 current / 10 desired", "4 current / 5 desired")
    text = text.replace("True    TooManyReplicas ", "True    TooFewReplicas  ")
    assert facts(text)["hpa.at_max"] is False
