"""A clocks-event (throttle) reason said in a sentence (stated.yaml's clocks-event-* entries): each reason nvidia-smi
-q prints in its "Clocks Throttle Reasons" / "Clocks Event Reasons" section, and its NVML name, written with a verb
of it being on or as what holds the clocks down, gives the value nvidia-smi -q's own reader gives; negated, asked
and conditional sentences give nothing."""

from __future__ import annotations

import pytest

from collectors.catalogs.stated import stated_terms
from collectors.parsers.gpu.nvidia_smi_query import _REASONS
from tests.unit.parsers.paste_facts import stated_facts

# https://github.com/l4rz/reverse-engineering-dell-idrac-to-get-rid-of-gpu-throttling/issues/3 (description)
IDRAC_3 = (
    "I am currently running an A100 SXM4 80G, 400W on a Dell Poweredge T550. HW Slowdown does not appear in "
    "nvidia-smi -q. However, when running at full load, frequency reduction and SW Power Cap will appear at about "
    "240W. If I manually limit the Power to 350W, it will appear at 210W."
)

# Composed from the row names nvidia-smi -q prints (nvidia-smi(1), drivers 450-580) and NVML's names.
SHAPES = [
    "under load {name} appears after a minute",
    "{name} is active on GPU 3 while the job runs",
    "the clocks are throttled by {name} at 250 W",
    "our GPUs are slowed down due to {name} under full load",
    "{name} : Active while the job runs on the node",
]
NVML = {"SW Power Cap": "SwPowerCap", "HW Slowdown": "HwSlowdown", "HW Thermal Slowdown": "HwThermalSlowdown",
        "HW Power Brake Slowdown": "HwPowerBrakeSlowdown", "SW Thermal Slowdown": "SwThermalSlowdown"}


@pytest.mark.parametrize("name", sorted(_REASONS))
@pytest.mark.parametrize("shape", SHAPES)
def test_each_reason_said_on_is_read_as_nvidia_smi_reads_it(name: str, shape: str) -> None:
    for spelt in (name, NVML[name]):
        got = stated_facts(shape.format(name=spelt)).get("gpu.throttle_reasons")
        assert got == [_REASONS[name]], (spelt, got)


def test_every_reason_has_its_entry() -> None:
    ids = {t.spec.id for t in stated_terms()}
    assert {i for i in ids if i.startswith("clocks-event-")} == {
        "clocks-event-sw-power-cap", "clocks-event-hw-slowdown", "clocks-event-sw-thermal-slowdown",
        "clocks-event-hw-thermal-slowdown", "clocks-event-hw-power-brake-slowdown"}


def test_the_real_sentence_reads_the_power_cap_and_not_the_denied_slowdown() -> None:
    assert stated_facts(IDRAC_3).get("gpu.throttle_reasons") == ["power"], stated_facts(IDRAC_3)


@pytest.mark.parametrize("sentence", [
    "HW Slowdown does not appear in nvidia-smi -q.",  # negated after the name
    "SW Power Cap is not active on any GPU.",  # negated
    "Is SW Power Cap active when the job runs?",  # asked
    "If HW Slowdown kicks in, the clocks would drop.",  # conditional
    "What does SW Power Cap mean in nvidia-smi?",  # asked, no verb of it being on
    "The docs list SW Power Cap and HW Slowdown as reasons.",  # named, not said on
])
def test_a_reason_not_said_on_is_not_read(sentence: str) -> None:
    assert "gpu.throttle_reasons" not in stated_facts(sentence), stated_facts(sentence)
