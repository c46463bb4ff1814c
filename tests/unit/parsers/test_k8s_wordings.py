"""Every upstream wording in collectors/catalogs/k8s_wordings.yaml, rendered as its program prints it, is read into
the facts it means: as a bare pasted line, and inside a `kubectl describe` Events row."""

from __future__ import annotations

from typing import Any

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from tests.unit.parsers.upstream_wordings import WORDINGS, rendered


def facts_of(text: str) -> dict[str, object]:
    result = parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=text))
    return {f.name: f.value for f in result.facts}


def missing(expect: dict[str, Any], facts: dict[str, object]) -> dict[str, tuple[object, object]]:
    """Expected facts that were not read as expected (a list fact must hold the expected items, in any order)."""
    out: dict[str, tuple[object, object]] = {}
    for name, want in expect.items():
        got = facts.get(name)
        ok = (isinstance(got, list) and all(item in got for item in want)) if isinstance(want, list) else got == want
        if not ok:
            out[name] = (want, got)
    return out


def test_every_entry_names_its_source() -> None:
    keys = {"id", "project", "file", "versions", "template", "values", "expect"}
    assert [e.get("id") for e in WORDINGS if set(e) != keys or not all(e[k] for k in ("project", "file"))] == []
    ids = [e["id"] for e in WORDINGS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("entry", WORDINGS, ids=lambda e: e["id"])
def test_a_rendered_wording_is_read(entry: dict[str, Any]) -> None:
    text = rendered(entry)
    assert "$" not in text.replace("$PATH", "")
    assert missing(entry["expect"], facts_of(text)) == {}


_EVENT_REASON = {"fit-error": "FailedScheduling", "kubelet-pull-failed": "Failed", "prober-failed": "Unhealthy",
                 "volumemanager-unable-to-mount-old": "FailedMount", "sandbox-dockershim": "FailedCreatePodSandBox",
                 "eviction-low-on-resource": "Evicted"}


@pytest.mark.parametrize("entry", [e for e in WORDINGS if e["id"] in _EVENT_REASON], ids=lambda e: e["id"])
def test_a_wording_in_a_describe_events_row_is_read(entry: dict[str, Any]) -> None:
    row = f"  Warning  {_EVENT_REASON[entry['id']]}  3m (x4 over 10m)  kubelet  {rendered(entry)}"
    text = "Events:\n  Type     Reason  Age  From  Message\n  ----     ------  ---  ----  -------\n" + row
    assert missing(entry["expect"], facts_of(text)) == {}
