"""The `node_instance` next-check variable: the node's exporters by name or by any address the evidence gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.factset import FactSet
from collectors.models import Artifact, ArtifactKind, Target
from collectors.parsers.kubernetes import describe_node
from playbooks.engine import node_instance, template_variables
from playbooks.templates import render

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "describe_node"


def described(name: str) -> FactSet:
    text = (DESCRIBE / name).read_text(encoding="utf-8")
    return FactSet(describe_node.parse(Artifact(id="a1", kind=ArtifactKind.DESCRIBE_NODE, content=text)).facts)


@pytest.mark.parametrize(("node", "target", "facts", "expected"), [
    # No address in the evidence: the name, as kube-prometheus relabels instance, with or without a port.
    ("gpu-node-9", Target(), FactSet(), "(gpu-node-9)(:[0-9]+)?"),
    # describe node's Addresses block (InternalIP, InternalDNS, Hostname), for the node it describes.
    ("gpu-node-4", Target(), "gpu_full.txt",
     "(gpu-node-4|10\\\\.0\\\\.12\\\\.44|ip-10-0-12-44\\\\.ec2\\\\.internal)(:[0-9]+)?"),
    # Another node's addresses are not this node's.
    ("gpu-node-7", Target(), "gpu_full.txt", "(gpu-node-7)(:[0-9]+)?"),
    # An alert that named its node by scrape address: that host, without its port.
    ("node-a", Target(node="node-a", instance="10.0.1.10:9100"), FactSet(),
     "(node-a|10\\\\.0\\\\.1\\\\.10)(:[0-9]+)?"),
])
def test_node_instance(node: str, target: Target, facts: FactSet | str, expected: str) -> None:
    fact_set = described(facts) if isinstance(facts, str) else facts
    assert node_instance(node, target, fact_set) == expected


def test_a_next_check_matches_the_address_node_exporter_was_scraped_by() -> None:
    facts = described("gpu_full.txt")
    check = render('node_memory_MemAvailable_bytes{instance=~"{{ node_instance }}"}',
                   template_variables(Target(), facts))
    # As PromQL reads the string: `\\.` is a literal dot to the regex, so 10.0.12.44:9100 matches and 10x0 does not.
    assert check == ('node_memory_MemAvailable_bytes{instance=~"(gpu-node-4|10\\\\.0\\\\.12\\\\.44|'
                     'ip-10-0-12-44\\\\.ec2\\\\.internal)(:[0-9]+)?"}')
