"""The readers table (collectors/parsers/readers.py) says what every parser module's PARSER says, and detection
loads the sniffer modules only: a parser module is imported when a paste holds its kind."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from collectors.models import ArtifactKind
from collectors.parsers import registry
from collectors.parsers.readers import GROUPED_KINDS, NAMES, READERS, Reader
from collectors.parsers.sniffing import LINE_CLAIMS, SNIFFERS

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
def test_the_table_says_what_the_parser_module_says(reader: Reader) -> None:
    parser = import_module(reader.parser).PARSER
    sniffer = import_module(reader.sniffer)
    assert parser.kinds == reader.kinds
    assert parser.parse.__module__ == reader.parser
    assert parser.sniff is sniffer.sniff is SNIFFERS[reader.kind]
    assert (parser.claims_line is not None) == reader.claims_lines
    if reader.claims_lines:
        assert parser.claims_line is sniffer.claims_line
        assert (reader.kind, sniffer.claims_line) in LINE_CLAIMS
    assert parser.reads_many == reader.reads_many
    assert (reader.kind in GROUPED_KINDS) == (reader.reads_many or reader.claims_lines)
    assert all(NAMES[k] == reader.parser.rsplit(".", 1)[-1] for k in reader.kinds)


def test_every_kind_is_read_by_one_module_and_all_lists_them_in_order() -> None:
    kinds = [k for r in READERS for k in r.kinds]
    assert len(kinds) == len(set(kinds))
    assert [p.kinds for p in registry.all_parsers()] == [r.kinds for r in READERS]
    assert [k for k, _ in LINE_CLAIMS] == [ArtifactKind.KERNEL_LOG, ArtifactKind.KUBELET_LOG, ArtifactKind.NCCL_LOG,
                                           ArtifactKind.CONTAINER_LOG]


def test_a_kind_no_parser_reads_has_none() -> None:
    assert registry.PARSERS.get(ArtifactKind.TEXT) is None
    with pytest.raises(KeyError):
        registry.PARSERS[ArtifactKind.TEXT]
    events = import_module("collectors.parsers.kubernetes.events").PARSER
    assert registry.PARSERS.get(ArtifactKind.EVENTS) is events.parse


def test_detection_imports_no_parser_whose_sniffer_lives_apart(tmp_path: Path) -> None:
    script = (
        "import json, sys\n"
        "from collectors.paste import artifacts_from_text\n"
        "pieces = artifacts_from_text('Warning  FailedScheduling  0/3 nodes are available: 3 Insufficient "
        "nvidia.com/gpu.', 'one', source='file')\n"
        "print(json.dumps([[str(p.kind) for p in pieces], sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    kinds, modules = json.loads(done.stdout.splitlines()[-1])
    assert kinds == ["events"]
    apart = {r.parser for r in READERS if r.sniffer != r.parser}
    assert apart  # else this test checks nothing
    assert not apart & set(modules)
