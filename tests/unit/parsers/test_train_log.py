"""Training-loop step timings and loader warnings (collectors/catalogs/train_logs.yaml) read as facts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.logs import train_log
from collectors.parsers.registry import parse_artifact
from collectors.yaml_safe import safe_load

CATALOG = safe_load((Path(train_log.__file__).parents[2] / "catalogs" / "train_logs.yaml").read_text(encoding="utf-8"))
STEP_TEMPLATES = [t for e in CATALOG["step_timings"] for t in e["templates"]]
WARNING_TEMPLATES = [t for e in CATALOG["few_workers_warnings"] for t in e["templates"]]

# https://github.com/pytorch/examples/issues/387 (issue description, verbatim lines): ResNet-18 on ImageNet with
# the example's ProgressMeter; the running averages say 2.39 s of each 2.65 s iteration waited for data.
EXAMPLES_387 = "\n".join([
    'Epoch: [0][1820/5005]   Time 0.218 (2.652)      Data 0.001 (2.392)      Loss 5.8934 (6.3568)    Prec'
    '@1 2.344 (1.454)    Prec@5 7.812 (5.158)',
    'Epoch: [0][1830/5005]   Time 2.469 (2.650)      Data 2.126 (2.389)      Loss 5.5614 (6.3530)    Prec'
    '@1 4.297 (1.469)    Prec@5 16.797 (5.204)',
])
# https://github.com/NVIDIA-NeMo/Speech/issues/1204 (issue description, verbatim line): Lightning 1.x's warning.
NEMO_1204 = (
    "ackages/pytorch_lightning/utilities/distributed.py:37: UserWarning: The dataloader, val dataloader 0, does not "
    "have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` (try "
    "32 which is the number of cpus on this machine) in the `DataLoader` init to improve performance.\n"
)


def facts(text: str, kind: ArtifactKind = ArtifactKind.TEXT) -> dict[str, object]:
    artifact = Artifact(id="p", kind=kind, content=text, source="paste")
    return {f.name: f.value for f in parse_artifact(artifact).facts}


@pytest.mark.parametrize("template", STEP_TEMPLATES, ids=lambda t: t["line"][:40])
def test_every_step_format_is_read_as_its_program_prints_it(template: dict[str, object]) -> None:
    line = str(template["line"])
    assert train_log.data_wait(line) == template["ratio"]
    assert facts(line)["train.data_wait_ratio"] == template["ratio"]  # also from a paste, through the signals
    assert facts(line, ArtifactKind.CONTAINER_LOG)["train.data_wait_ratio"] == template["ratio"]


@pytest.mark.parametrize("line", WARNING_TEMPLATES)
def test_both_lightning_wordings_are_read(line: str) -> None:
    assert facts(line)["train.loader_few_workers"] is True


def test_a_real_imagenet_log_reads_the_last_running_average() -> None:
    assert facts(EXAMPLES_387)["train.data_wait_ratio"] == round(2.389 / 2.650, 3)


def test_a_real_lightning_warning_is_read() -> None:
    assert facts(NEMO_1204, ArtifactKind.CONTAINER_LOG) == {
        "train.loader_few_workers": True, "train.loader_workers_suggested": 32}


@pytest.mark.parametrize(("template", "count"), list(zip(WARNING_TEMPLATES, [32, 47], strict=True)))
def test_the_suggested_worker_count_is_read_from_both_wordings(template: str, count: int) -> None:
    assert facts(template, ArtifactKind.CONTAINER_LOG)["train.loader_workers_suggested"] == count


def test_a_wrapped_warning_reads_the_count_from_the_next_line() -> None:
    # Lightning 2.x's wording on a one-CPU machine, wrapped where the paste wrapped it.
    lines = ["data_connector.py:441: The 'val_dataloader' does not have many workers which may be a bottleneck.",
             "Consider increasing the value of the `num_workers` argument` to `num_workers=1` in the `DataLoader`"]
    read = facts("\n".join(lines), ArtifactKind.CONTAINER_LOG)
    assert read["train.loader_workers_suggested"] == 1
    assert train_log.suggested_workers(["the loader is slow, try 16 workers"]) is None


@pytest.mark.parametrize("line", [
    "Epoch: [0][10/5005]\tTime 0.100 (0.100)\tData 0.500 (0.500)",  # a batch wait longer than the step: misread
    "Epoch: [0][10/5005]\tTime 0.000 (0.000)\tData 0.000 (0.000)",
    "loss: 0.5, time: 12:00:01, data_time: n/a",
    "Last update time: 0.5 data_time: unknown",
])
def test_lines_that_are_not_step_timings_give_nothing(line: str) -> None:
    assert train_log.data_wait(line) is None


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("Time Data()0.123456789:_,\t\nx")), max_size=300))
def test_garbage_never_raises_and_any_ratio_is_a_share(text: str) -> None:
    got = facts(text, ArtifactKind.CONTAINER_LOG).get("train.data_wait_ratio")
    assert got is None or (isinstance(got, float) and 0.0 <= got <= 1.0)
