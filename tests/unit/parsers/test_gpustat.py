"""gpustat's line per GPU, rendered as gpustat/core.py (wookayin/gpustat 0.4-1.1) prints it with each option."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.gpu import gpustat


def facts_of(text: str) -> dict[str, object]:
    result = gpustat.read(Artifact(id="a", kind=ArtifactKind.TEXT, content=text))
    assert result.problems == []
    return {f.name: f.value for f in result.facts}


# Sample values: GPU 0 at 20 %, GPU 1 at 7 %; 8000 of 10000 MB used on GPU 0; 71 degrees.
_OPTIONS = {
    "default, before 1.0": ("[0] GeForce GTX 1080 Ti | 71'C,  20 % |  8000 / 10000 MB | alice(7997M)\n"
                            "[1] GeForce GTX 1080 Ti | 60'C,   7 % |  1000 / 10000 MB | alice(997M) root(5M)"),
    "default, 1.0 and later": ("[0] NVIDIA A100-SXM4-80GB | 71°C,  20 % |  8000 / 10000 MB | alice(7997M)\n"
                               "[1] NVIDIA A100-SXM4-80GB | 60°C,   7 % |  1000 / 10000 MB |"),
    "--show-fan": ("[0] Tesla V100 | 71°C,  35 %,  20 % |  8000 / 10000 MB | alice(7997M)\n"
                   "[1] Tesla V100 | 60°C,  33 %,   7 % |  1000 / 10000 MB |"),
    "--show-power": ("[0] Tesla V100 | 71°C,  20 %,  120 / 300 W |  8000 / 10000 MB | alice:python/4242(7997M)\n"
                     "[1] Tesla V100 | 60°C,   7 %,   40 / 300 W |  1000 / 10000 MB |"),
    "--show-codec": ("[0] Tesla T4 | 71°C,  20 % (E:   0 %  D:   0 %) |  8000 / 10000 MB | python(7997M)\n"
                     "[1] Tesla T4 | 60°C,   7 % (E:   0 %  D:   0 %) |  1000 / 10000 MB |"),
}


@pytest.mark.parametrize("option", sorted(_OPTIONS))
def test_each_layout_gives_the_busiest_gpu_and_the_fullest_memory(option: str) -> None:
    text = "server1  Sat Nov 28 23:55:00 2026  535.54.03\n" + _OPTIONS[option] + "\n"
    assert facts_of(text) == {"gpu.util_percent": 20.0, "gpu.fb_used_ratio": 0.8, "gpu.temp_c": 71.0}


def test_values_nvml_did_not_give_are_left_out() -> None:
    assert facts_of("[0] Tesla K80 | ??'C,  ?? % |    ?? /    ?? MB | (Not Supported)\n") == {}


def test_the_brief_s_line_reads_98_percent() -> None:
    line = "[0] GeForce GTX 1080 Ti | 57'C,  98 % |  8000 / 11178 MB | user(7997M)\n"
    assert facts_of(line)["gpu.util_percent"] == 98.0


@pytest.mark.parametrize("other", ["[0] 57'C 98 %", "[200]\t950 responses", "| 0 | 98 % | 8000 / 11178 MiB |"])
def test_other_bracketed_lines_are_not_gpustat(other: str) -> None:
    assert facts_of(other) == {}


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("[]0123456789 |'°C,%/MB?()\n")), max_size=300))
def test_garbage_never_raises(text: str) -> None:
    gpustat.read(Artifact(id="a", kind=ArtifactKind.TEXT, content=text))


# Real pastes, verbatim, cut at whole lines.
REAL = [
    # https://github.com/wookayin/gpustat/issues/130: four idle P100s, nothing loaded.
    ("anamaria@gpu-a-11.extreme:~ $ gpustat\n"
     "gpu-a-11.extreme         Mon Aug 22 15:23:57 2022  515.65.01\n"
     "[0] Tesla P100-PCIE-16GB | 27'C,   0 % |   103 / 16384 MB |\n"
     "[1] Tesla P100-PCIE-16GB | 27'C,   0 % |   103 / 16384 MB |\n"
     "[2] Tesla P100-PCIE-16GB | 28'C,   0 % |   103 / 16384 MB |\n"
     "[3] Tesla P100-PCIE-16GB | 27'C,   2 % |   103 / 16384 MB |\n",
     {"gpu.util_percent": 2.0, "gpu.fb_used_ratio": 0.0063, "gpu.temp_c": 28.0}),
    # https://github.com/wookayin/gpustat/issues/97 (the maintainer's example, --show-cmd --show-pid).
    ("[0] GeForce GTX Titan X | 77'C,  96 % | 11848 / 12287 MB | python/52046(11821M)\n",
     {"gpu.util_percent": 96.0, "gpu.fb_used_ratio": 0.9643, "gpu.temp_c": 77.0}),
]


@pytest.mark.parametrize(("text", "expected"), REAL)
def test_real_pastes(text: str, expected: dict[str, object]) -> None:
    assert facts_of(text) == expected
