"""Slurm jobstats' Overall Utilization meters (PrincetonUniversity/jobstats output_formatters.py) read as facts."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact


def facts(text: str) -> dict[str, object]:
    artifact = Artifact(id="p", kind=ArtifactKind.TEXT, content=text, source="paste")
    return {f.name: f.value for f in parse_artifact(artifact).facts}


def meter(name: str, percent: int) -> str:
    """The meter as jobstats draws it: one bar per 2%, the figure right-aligned in 50 columns."""
    bars, text = max(0, min(50, percent // 2)), f"{percent}%"
    if bars + len(text) > 50:
        bars = 50 - len(text)
    return f"  {name}  [{'|' * bars}{' ' * (50 - bars - len(text))}{text}]"


@pytest.mark.parametrize("percent", [0, 7, 33, 98, 100])
def test_every_meter_width_is_read(percent: int) -> None:
    got = facts(meter("GPU utilization", percent) + "\n" + meter("CPU utilization", percent))
    assert got == {"gpu.job_util_avg_percent": float(percent), "cpu.busy_ratio": round(percent / 100, 4)}


def test_a_real_report_is_read() -> None:
    # https://github.com/gnn-tracking/gnn_tracking/issues/95 (verbatim lines of the pasted jobstats report)
    text = (
        "  CPU utilization  [||||||                                         12%]\n"
        "  CPU memory usage [||||||||||||||||||||||||||||||                 60%]\n"
        "  GPU utilization  [||||||||||||||||                               33%]\n"
        "  GPU memory usage [|||||||||||||||||||||||||||||||||||||          74%]\n"
    )
    assert facts(text) == {"cpu.busy_ratio": 0.12, "gpu.job_util_avg_percent": 33.0}


def test_a_mig_job_without_a_figure_gives_nothing() -> None:
    line = "  GPU utilization  [     GPU utilization is unknown for MIG jobs      ]"
    assert facts(line) == {}
