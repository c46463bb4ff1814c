"""The Xid catalog: coverage, the secondary flag that drives xid.primary_codes, and cited sources."""

from __future__ import annotations

import pydantic
import pytest

from collectors.catalogs.xid import XidEntry, load_catalog, lookup, paging_codes, secondary_codes

REQUIRED = [13, 31, 32, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 119, 120, 121, 140, 143]
NVIDIA = "NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors)"


def test_catalog_covers_the_required_codes() -> None:
    assert set(REQUIRED) <= set(load_catalog())


@pytest.mark.parametrize("code", REQUIRED)
def test_every_entry_is_complete_and_cites_nvidia(code: int) -> None:
    entry = lookup(code)
    assert entry is not None
    assert entry.code == code
    assert all([entry.name, entry.meaning, entry.likely_cause, entry.action])
    assert NVIDIA in entry.sources


@pytest.mark.parametrize(("code", "seed"), [
    (31, "seed 001:1612"),
    (31, "seed 001:801"),
    (61, "seed 001:1614"),
    (79, "seed 001:1615"),
    (79, "seed 003:177"),
])
def test_seed_citations(code: int, seed: str) -> None:
    entry = lookup(code)
    assert entry is not None
    assert seed in entry.sources


def test_xid_45_is_secondary_and_not_the_seed_s_garbled_meaning() -> None:
    entry = lookup(45)
    assert entry is not None
    assert entry.secondary is True
    assert entry.severity == "info"
    assert entry.name == "Preemptive cleanup, due to previous errors"
    assert "Raven" not in entry.name + entry.meaning
    assert any("E7" in source for source in entry.sources)


@pytest.mark.parametrize(("code", "severity"), [(79, "critical"), (48, "critical"), (95, "critical"),
                                                (94, "warning"), (31, "warning"), (43, "info")])
def test_severity(code: int, severity: str) -> None:
    entry = lookup(code)
    assert entry is not None
    assert entry.severity == severity


def test_secondary_codes() -> None:
    assert secondary_codes() == frozenset({45, 154})


def test_lookup_unknown_code() -> None:
    assert lookup(12345) is None


def test_load_catalog_returns_a_copy() -> None:
    catalog = load_catalog()
    catalog.pop(79)
    assert lookup(79) is not None
    assert 79 in load_catalog()


def test_entry_rejects_unknown_fields() -> None:
    with pytest.raises(pydantic.ValidationError):
        XidEntry(code=1, name="n", meaning="m", likely_cause="c", action="a", severity="info",
                 cause_class="application", sources=("s",), colour="red")  # type: ignore[call-arg]


def test_entry_needs_a_known_class() -> None:
    with pytest.raises(pydantic.ValidationError):
        XidEntry(code=1, name="n", meaning="m", likely_cause="c", action="a", severity="info",
                 cause_class="cosmic-rays", sources=("s",))  # type: ignore[arg-type]


@pytest.mark.parametrize(("code", "cause_class"), [
    (13, "application"), (31, "application"), (43, "application"), (45, "after-effect"), (48, "hardware"),
    (62, "driver"), (79, "hardware"), (119, "driver"),
])
def test_class(code: int, cause_class: str) -> None:
    entry = lookup(code)
    assert entry is not None and entry.cause_class == cause_class


def test_paging_codes_are_the_critical_hardware_and_driver_faults() -> None:
    """The shipped GPUXidError rule pages on exactly these (tests/deploy/test_rules.py); application Xids warn."""
    codes = paging_codes()
    assert {48, 62, 64, 74, 79, 95, 119, 120} <= codes
    assert not codes & {13, 31, 43, 45, 63, 92, 94, 154}
    assert all(lookup(c).severity == "critical" for c in codes)  # type: ignore[union-attr]
