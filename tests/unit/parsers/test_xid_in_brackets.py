"""An Xid said in prose with its name in brackets after the code (signals.yaml xid-named-in-brackets): read, and
beside another Xid in the same sentence both are kept."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts


# Verbatim, cut at whole lines; the source beside each.
@pytest.mark.parametrize(("url", "paste", "codes"), [
    ("https://github.com/leptonai/gpud/issues/604",
     "XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00", [79]),
    ("https://github.com/aws/eks-node-monitoring-agent/pull/94",
     "Addresses XID 79 (GPU has fallen off the bus) scenarios by changing NvidiaDeviceCountMismatch severity from"
     " Warning to Fatal.", [79]),
])
def test_real_pastes_of_an_xid_with_its_name_in_brackets(url: str, paste: str, codes: list[int]) -> None:
    assert joined_facts(paste).get("xid.codes") == codes, url


# Rendered as NVIDIA pairs code and name (nverror.h's public strings), beside a second Xid said plainly.
@pytest.mark.parametrize(("sentence", "codes"), [
    ("We saw XID 137 (NVLink Error) on six GPUs, then XID 94 with the payload Contained.", [137, 94]),
    ("Xid 48 (ECC Error (DBE Error)) was logged on GPU 3.", [48]),
    ("xid: 119 (GSP RPC timeout) appeared before the hang.", [119]),
])
def test_a_code_named_in_brackets_is_read_beside_another(sentence: str, codes: list[int]) -> None:
    assert sorted(joined_facts(sentence).get("xid.codes", [])) == sorted(codes)  # type: ignore[arg-type]


@pytest.mark.parametrize("sentence", [
    "There is no Xid 137 (NVLink Error) in dmesg.",  # negated
    "Is it Xid 137 (NVLink Error)?",  # asked
    "The pod exited (137) after the OOM kill.",  # an exit code, no Xid
])
def test_a_denied_or_asked_xid_or_another_137_is_not_read(sentence: str) -> None:
    assert "xid.codes" not in joined_facts(sentence)
