"""`kubectl get endpoints` tables: a real paste, the printer's cells rendered with sample values, and the rows
that must not be read as endpoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import endpoints_table
from collectors.paste import artifacts_from_text

CASE = (Path(__file__).resolve().parents[2] / "realworld" / "service-unreachable"
        / "kube-prometheus-913-get-ep-controller-manager-none-binary-cluster" / "evidence.txt")


def facts(text: str) -> list[tuple[str, object, int, str]]:
    result = endpoints_table.parse(Artifact(id="a", kind=ArtifactKind.ENDPOINTS_TABLE, content=text))
    return [(f.name, f.value, f.citation.start, f.subject) for f in result.facts]


def test_grepped_rows_after_the_command_are_read() -> None:
    # prometheus-operator/kube-prometheus#913: `kubectl get ep -n kube-system | grep ...`, no header; the
    # controller-manager and scheduler Services have no address.
    text = CASE.read_text(encoding="utf-8")
    kinds = {str(a.kind): a for a in artifacts_from_text(text, "paste")}
    assert "endpoints-table" in kinds
    assert [(name, value, subject) for name, value, _, subject in facts(kinds["endpoints-table"].content)] == [
        ("endpoints.ready", 0, "service/prometheus-operator-kube-controller-manager")]


# Rendered as pkg/printers/internalversion/printers.go formatEndpoints prints the cell, under kubectl's header.
@pytest.mark.parametrize(("text", "expected"), [
    ("NAME   ENDPOINTS   AGE\nweb    <none>      3m\n", [("endpoints.ready", 0, 2, "service/web")]),
    ("NAME   ENDPOINTS                                      AGE\n"
     "web    10.0.0.1:8080,10.0.0.2:8080,10.0.0.3:8080 + 2 more...   5d\n", [("endpoints.ready", 5, 2, "service/web")]),
    ("NAMESPACE   NAME   ENDPOINTS       AGE\nshop        web    10.0.0.1:8080   1h\n",
     [("endpoints.ready", 1, 2, "service/shop/web")]),
    ("NAME   ENDPOINTS   AGE\nweb               12m\n", [("endpoints.ready", 0, 2, "service/web")]),  # only not ready
    ("NAME   ENDPOINTS                      AGE\ndb     [fd00::1]:5432,[fd00::2]:5432   2d\n",
     [("endpoints.ready", 2, 2, "service/db")]),
    # Several Services with addresses: none is singled out, and the counts are not summed into one.
    ("NAME   ENDPOINTS       AGE\na      10.0.0.1:80     1d\nb      10.0.0.2:80     1d\n", []),
    # kubectl 1.0's columns, NAME and ENDPOINTS without AGE (pkg/kubectl/resource_printer.go endpointColumns).
    ("NAME             ENDPOINTS\nweb              <none>\nkube-dns         10.2.2.4:53\n",
     [("endpoints.ready", 0, 2, "service/web")]),
    ("NAME             ENDPOINTS\nredis-master     10.2.2.5:6379\n",
     [("endpoints.ready", 1, 2, "service/redis-master")]),
])
def test_rendered_cells(text: str, expected: list[tuple[str, object, int, str]]) -> None:
    assert facts(text) == expected


def test_rows_alone_are_not_claimed_without_the_command() -> None:
    # A NetworkPolicy row (NAME POD-SELECTOR AGE) prints an empty selector as <none> too.
    assert endpoints_table.sniff("deny-all   <none>   5m\n") == 20
    assert "endpoints-table" not in {str(a.kind) for a in artifacts_from_text("deny-all   <none>   5m\n", "paste")}
    assert endpoints_table.sniff("NAME   ENDPOINTS   AGE\nweb   <none>   3m\n") == 90
    assert endpoints_table.sniff("NAME   ENDPOINTS\nweb   10.0.0.1:80\n") == 90
