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
    keys = {"id", "project", "file", "versions", "event", "template", "values", "expect"}
    assert [e.get("id") for e in WORDINGS if set(e) != keys or not all(e[k] for k in ("project", "file"))] == []
    ids = [e["id"] for e in WORDINGS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("entry", WORDINGS, ids=lambda e: e["id"])
def test_a_rendered_wording_is_read(entry: dict[str, Any]) -> None:
    text = rendered(entry)
    assert "$" not in text.replace("$PATH", "")
    assert missing(entry["expect"], facts_of(text)) == {}


CARRIED = [e for e in WORDINGS if e["event"]]


def _rows(entry: dict[str, Any]) -> dict[str, str]:
    """The wording as each kubectl era shows the event that carries it."""
    reason, message = entry["event"], rendered(entry)
    return {
        "describe": ("Events:\n  Type     Reason  Age  From  Message\n  ----     ------  ---  ----  -------\n"
                     f"  Warning  {reason}  3m (x4 over 10m)  kubelet  {message}"),
        "get-events-1.3-1.9": (
            "LASTSEEN   FIRSTSEEN   COUNT     NAME      KIND      SUBOBJECT   TYPE      REASON" + " " * 30
            + "SOURCE                MESSAGE\n"
            + f"1m         5m          7         web-0     Pod                   Warning   {reason:<36}"
            + f"{{kubelet node-1}}      {message}"),
        "get-events-1.14+": ("LAST SEEN   TYPE      REASON" + " " * 30 + "OBJECT      MESSAGE\n"
                             + f"2m          Warning   {reason:<36}pod/web-0   {message}"),
    }


@pytest.mark.parametrize("layout", ["describe", "get-events-1.3-1.9", "get-events-1.14+"])
@pytest.mark.parametrize("entry", CARRIED, ids=lambda e: e["id"])
def test_a_wording_in_an_event_row_is_read(entry: dict[str, Any], layout: str) -> None:
    assert missing(entry["expect"], facts_of(_rows(entry)[layout])) == {}
