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
    # Only the first layout lists alice on both GPUs; root's 5 MB is no job of hers.
    gap = {"gpu.job_util_gap_percent": 13.0} if option == "default, before 1.0" else {}
    assert facts_of(text) == {"gpu.util_percent": 20.0, "gpu.fb_used_ratio": 0.8, "gpu.temp_c": 71.0, **gap}


# Each process as gpustat prints it with its options (user by default, :command with -c, /pid with -p): the owner
# of a job on two GPUs is the same whatever the options, and the gap between its GPUs is read.
@pytest.mark.parametrize("cell", ["bob({m}M)", "bob:python/4242({m}M)", "bob/4242({m}M)", "bob:python({m}M)"])
def test_one_job_on_two_gpus_gives_the_gap_between_them(cell: str) -> None:
    text = (f"[0] NVIDIA A100-SXM4-80GB | 61°C,  95 % | 40000 / 81920 MB | {cell.format(m=39990)} root(5M)\n"
            f"[1] NVIDIA A100-SXM4-80GB | 40°C,  10 % | 30000 / 81920 MB | {cell.format(m=29990)}\n")
    assert facts_of(text)["gpu.job_util_gap_percent"] == 85.0


def test_two_jobs_on_one_gpu_each_give_no_gap() -> None:
    text = ("[0] Tesla V100 | 61°C,  95 % | 20000 / 32510 MB | alice(19990M)\n"
            "[1] Tesla V100 | 40°C,   3 % | 20000 / 32510 MB | bob(19990M)\n")
    assert "gpu.job_util_gap_percent" not in facts_of(text)


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
    # https://github.com/rosinality/style-based-gan-pytorch/issues/65 (the reporter's comment of 2019-11-10): one
    # DataParallel job on two GPUs, evenly busy at 64p; root's 5 MB is the X server.
    ("[0] GeForce GTX 1080 Ti | 85'C,  99 % |  5705 / 11176 MB | my_user(5687M) root(5M)\n"
     "[1] GeForce GTX 1080 Ti | 79'C, 100 % |  4309 / 11178 MB | my_user(4297M)\n",
     {"gpu.util_percent": 100.0, "gpu.fb_used_ratio": 0.5105, "gpu.temp_c": 85.0, "gpu.job_util_gap_percent": 1.0}),
    # https://github.com/Lightning-AI/pytorch-lightning/issues/4828: gpustat pasted as a markdown table; one user's
    # DDP job on GPUs 0-5, all at 100 %, another user's process on GPU 6 at 0 %.
    ("| Gpu name                | Utilization   | memory           | P"
      "rocess                                             |\n"
     "| ----------------------- | ------------- | ---------------- | -"
      "-------------------------------------------------- |\n"
     "| [0]GeForce GTX 1080 Ti  | 27'C,   100 % | 11007 / 11178 MB | x"
      "x(11003M) xx(0M) xx(0M) xx(0M) xx(0M) xx(0M)       |\n"
     "| [1] GeForce GTX 1080 Ti | 64'C, 100 %   | 11025 / 11178 MB | x"
      "x(0M) xx(11021M) xx(0M) xx(0M) xx(0M) xx(0M)       |\n"
     "| [2] GeForce GTX 1080 Ti | 67'C, 100 %   | 11015 / 11178 MB | x"
      "x(0M) xx(0M) xx(11011M) xx(0M) xx(0M) xx(0M)       |\n"
     "| [3] GeForce GTX 1080 Ti | 62'C, 100 %   | 11137 / 11178 MB | x"
      "x(0M) xx(0M) xx(0M) xx(11133M) xx(0M) xx(0M)       |\n"
     "| [4] GeForce GTX 1080 Ti | 59'C, 100 %   | 11023 / 11178 MB | x"
      "x(0M) xx(0M) xx(0M) xx(0M)xx(0M) xx(11019M)        |\n"
     "| [5] GeForce GTX 1080 Ti | 50'C, 100 %   | 11031 / 11178 MB | x"
      "x(0M) xx(0M) xx(0M) xx(0M) xx(11027M) xx(0M)       |\n"
     "| [6] GeForce GTX 1080 Ti | 24'C,   0 %   | 10665 / 11178 MB | a"
      "aa(10661M) xx(0M) xx(0M) xx(0M) xx(0M)xx(0M)xx(0M) |\n",
     {"gpu.util_percent": 100.0, "gpu.fb_used_ratio": 0.9963, "gpu.temp_c": 67.0, "gpu.job_util_gap_percent": 0.0}),
]


@pytest.mark.parametrize(("text", "expected"), REAL)
def test_real_pastes(text: str, expected: dict[str, object]) -> None:
    assert facts_of(text) == expected
