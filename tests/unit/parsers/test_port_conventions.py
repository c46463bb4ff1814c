"""A Service port named for a protocol, served on its conventional port, whose targetPort is another number
(collectors/catalogs/port_names.yaml, collectors/port_conventions.py), read from `kubectl describe service` and from
Service objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import describe_service
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
from collectors.port_conventions import conventions, off_convention

CATALOG: dict[str, Any] = yaml.safe_load(
    (Path(__file__).resolve().parents[3] / "collectors" / "catalogs" / "port_names.yaml").read_text())


def _describe(name: str, port: int, target: str) -> dict[str, object]:
    # As kubectl describe service prints a port (kubectl pkg/describe describeService: "Port:\t%s\t%d/%s",
    # "TargetPort:\t%s/%s"), its name "<unset>" when it has none.
    text = (f"Name:              cache\nNamespace:         default\nSelector:          app=cache\n"
            f"Type:              ClusterIP\nIP:                10.96.40.2\nPort:              {name}  {port}/TCP\n"
            f"TargetPort:        {target}/TCP\nEndpoints:         10.244.1.5:{target}\n")
    result = describe_service.parse(Artifact(id="a", kind=ArtifactKind.DESCRIBE_SERVICE, content=text))
    return {f.name: f.value for f in result.facts}


def _object(name: str, port: int, target: str) -> dict[str, object]:
    text = (f"apiVersion: v1\nkind: Service\nmetadata:\n  name: cache\nspec:\n  selector:\n    app: cache\n"
            f"  ports:\n  - name: {name}\n    port: {port}\n    targetPort: {target}\n")
    facts: dict[str, object] = {}
    for artifact in artifacts_from_text(text, "svc.yaml"):
        for fact in parse_artifact(artifact).facts:
            facts[fact.name] = fact.value
    return facts


@pytest.mark.parametrize("entry", CATALOG["conventions"], ids=lambda e: e["names"][0])
def test_every_name_on_its_port_to_another_target_is_read_both_ways(entry: dict[str, Any]) -> None:
    assert entry["source"]
    for name in entry["names"]:
        assert _describe(name, entry["port"], "9121")["service.target_ports_off_convention"] == ["9121"]
        assert _object(name, entry["port"], "9121")["service.target_ports_off_convention"] == ["9121"]
        # to its own port, or served on another port (a deliberate choice), it is no hint
        assert "service.target_ports_off_convention" not in _describe(name, entry["port"], str(entry["port"]))
        assert "service.target_ports_off_convention" not in _describe(name, entry["port"] + 10000, "9121")


@pytest.mark.parametrize(("name", "port", "target"), [
    ("http", 80, "8080"),       # remapped as a matter of course: not in the catalog
    ("<unset>", 6379, "9121"),  # no name, no convention
    ("redis", 6379, "redis"),   # a named targetPort is the joins' to judge
    ("metrics", 9121, "9121"),
])
def test_ports_that_say_nothing(name: str, port: int, target: str) -> None:
    assert not off_convention(name, str(port), target)
    assert "service.target_ports_off_convention" not in _describe(name, port, target)


def test_names_are_unique_and_lower_case() -> None:
    names = [n for e in CATALOG["conventions"] for n in e["names"]]
    assert len(names) == len(set(names)) == len(conventions())
    assert all(n == n.lower() for n in names)


# Real descriptions, verbatim lines: ports without a name, or remapped http, give nothing.
@pytest.mark.parametrize("text", [
    # https://github.com/nigelpoulton/ckad/issues/34
    ("Name:                     nginx-svc\nNamespace:                ckad\nLabels:                   app=nginx-deploy\n"
     "Annotations:              <none>\nSelector:                 app=nginx-deploy\n"
     "Type:                     NodePort\n"
     "IP Family Policy:         SingleStack\nIP Families:              IPv4\nIP:                       10.107.49.104\n"
     "IPs:                      10.107.49.104\nPort:                     <unset>  9000/TCP\n"
     "TargetPort:               80/TCP\nNodePort:                 <unset>  32543/TCP\n"),
    # https://github.com/kubernetes/website/issues/23549
    ("Name:                     mynginx\nNamespace:                default\nLabels:                   <none>\n"
     "Annotations:              <none>\nSelector:                 app=nginx\nType:                     NodePort\n"
     "IP:                       10.103.45.205\nPort:                     <unset>  8080/TCP\n"
     "TargetPort:               8080/TCP\nNodePort:                 <unset>  32137/TCP\n"
     "Endpoints:                172.18.0.3:8080\n"),
])
def test_real_descriptions_without_a_conventional_name_say_nothing(text: str) -> None:
    result = describe_service.parse(Artifact(id="a", kind=ArtifactKind.DESCRIBE_SERVICE, content=text))
    assert "service.target_ports" in {f.name for f in result.facts}
    assert "service.target_ports_off_convention" not in {f.name for f in result.facts}
