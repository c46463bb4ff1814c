"""PyTorch's CUDA out-of-memory message -> the failed request and the cache's reserved-but-unallocated memory.

Every line below is verbatim from the public thread named beside it. Expected figures are the numbers the
message prints (request, allocated, reserved-but-unallocated), converted to bytes here by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.gpu.cuda_oom import read_figures
from collectors.parsers.logs import container_log

KiB, MiB, GiB = 2**10, 2**20, 2**30
REALWORLD = Path(__file__).resolve().parents[2] / "realworld" / "oom-killed"

# (source, line, requested, allocated, reserved but unallocated) in bytes
MESSAGES: list[tuple[str, str, float, float, float]] = [
    (  # before PyTorch 2.1: reserved in total, of which "already allocated" is in use
        "https://github.com/mlcommons/algorithmic-efficiency/issues/426",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.51 GiB (GPU 0; 15.78 GiB total "
        "capacity; 6.25 GiB already allocated; 283.44 MiB free; 13.91 GiB reserved in total by PyTorch) If "
        "reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See "
        "documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
        2.51 * GiB, 6.25 * GiB, (13.91 - 6.25) * GiB,
    ),
    (
        "https://github.com/pytorch/pytorch/issues/35901",
        "CUDA out of memory. Tried to allocate 10.84 GiB (GPU 0; 23.65 GiB total capacity; 1.06 GiB already "
        "allocated; 10.26 GiB free; 12.53 GiB reserved in total by PyTorch)",
        10.84 * GiB, 1.06 * GiB, (12.53 - 1.06) * GiB,
    ),
    (
        "https://github.com/mlverse/torch/issues/1222",
        'I encountered an Error saying "CUDA out of memory. Tried to allocate 2.93 GiB (GPU 0; 23.80 GiB total '
        "capacity; 12.04 GiB already allocated; 2.82 GiB free; 19.69 GiB reserved in total by Pytorch) If "
        "reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation. See "
        'documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF".',
        2.93 * GiB, 12.04 * GiB, (19.69 - 12.04) * GiB,  # quoted inside prose, "Pytorch" in lower case
    ),
    (  # from PyTorch 2.1: the split is printed directly
        "https://github.com/kaito-project/kaito/issues/976",
        "ERROR 04-01 23:46:56 [engine.py:160] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
        "546.00 MiB. GPU 0 has a total capacity of 15.77 GiB of which 514.19 MiB is free. Process 562167 has "
        "15.25 GiB memory in use. Of the allocated memory 13.73 GiB is allocated by PyTorch, with 46.00 MiB "
        "allocated in private pools (e.g., CUDA Graphs), and 736.86 MiB is reserved by PyTorch but unallocated. "
        "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
        "to avoid fragmentation.  See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        546 * MiB, 13.73 * GiB, 736.86 * MiB,
    ),
    (
        "https://github.com/murong-xu/CADS/issues/4",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of "
        "31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory, this process has 18.73 GiB memory in "
        "use. Of the allocated memory 9.08 GiB is allocated by PyTorch, and 9.35 GiB is reserved by PyTorch but "
        "unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
        "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        22.78 * GiB, 9.08 * GiB, 9.35 * GiB,
    ),
    (  # "0 bytes is free", on an 8 GiB card
        "https://github.com/derrian-distro/LoRA_Easy_Training_Scripts/issues/178",
        "( torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 90.00 MiB. GPU 0 has a total "
        "capacity of 8.00 GiB of which 0 bytes is free. Of the allocated memory 7.13 GiB is allocated by PyTorch, "
        "and 127.09 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
        "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
        "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        90 * MiB, 7.13 * GiB, 127.09 * MiB,
    ),
    (  # a vLLM worker's prefix, and a request far larger than the idle cache
        "https://github.com/vllm-project/vllm/issues/17835",
        "(VllmWorker rank=1 pid=194255) ERROR 05-08 14:46:12 [multiproc_executor.py:435] torch.OutOfMemoryError: "
        "CUDA out of memory. Tried to allocate 270.00 MiB. GPU 1 has a total capacity of 21.98 GiB of which "
        "156.94 MiB is free. Including non-PyTorch memory, this process has 21.80 GiB memory in use. Of the "
        "allocated memory 21.42 GiB is allocated by PyTorch, and 24.12 MiB is reserved by PyTorch but "
        "unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
        "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        270 * MiB, 21.42 * GiB, 24.12 * MiB,
    ),
    (  # the oldest shape: "cached" changed meaning across releases, so it is not read
        "https://github.com/mkocabas/EpipolarPose/issues/6",
        "RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 7.93 GiB total capacity; 6.19 GiB "
        "already allocated; 340.00 MiB free; 551.04 MiB cached)",
        -1, -1, -1,
    ),
]


@pytest.mark.parametrize(("source", "line", "requested", "allocated", "unallocated"), MESSAGES,
                         ids=[m[0].split("github.com/")[1] for m in MESSAGES])
def test_figures(source: str, line: str, requested: float, allocated: float, unallocated: float) -> None:
    figures = read_figures(line)
    if requested < 0:
        assert figures is None
        return
    assert figures is not None, source
    assert figures.requested == round(requested)
    assert figures.allocated == round(allocated)
    assert abs(figures.reserved_unallocated - unallocated) <= 1  # old shape: a difference of two roundings
    assert figures.unallocated_share == round(unallocated / (allocated + unallocated), 3)


def test_lines_that_are_not_the_message() -> None:
    assert read_figures("") is None
    assert read_figures("torch.OutOfMemoryError: CUDA out of memory.") is None
    assert read_figures("Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 8.00 GiB") is None
    assert read_figures("Tried to allocate x GiB (GPU 0; y GiB total capacity;") is None
    # Reserved below allocated is not something PyTorch prints: no guess.
    assert read_figures("Tried to allocate 1.00 GiB (GPU 0; 8.00 GiB total capacity; 6.00 GiB already allocated; "
                        "1.00 GiB free; 5.00 GiB reserved in total by PyTorch)") is None
    assert read_figures("Tried to allocate 1.00 GiB (" + "9" * 100_000) is None


def _facts(text: str) -> dict[str, tuple[object, int, int]]:
    result = container_log.parse(Artifact(id="c1", kind=ArtifactKind.CONTAINER_LOG, content=text))
    assert result.problems == []
    return {f.name: (f.value, f.citation.start, f.citation.end) for f in result.facts if f.name.startswith("cuda.")}


def test_the_log_parser_cites_the_message_line() -> None:
    text = (REALWORLD / "mlcommons-algoperf-426-oom-after-eval-cached-blocks" / "evidence.txt").read_text("utf-8")
    facts = _facts(text)
    assert facts["cuda.oom"] == (True, 7, 7)
    assert facts["cuda.oom_request_bytes"] == (round(2.51 * GiB), 7, 7)
    assert facts["cuda.reserved_unallocated_bytes"][1:] == (7, 7)
    assert abs(int(str(facts["cuda.reserved_unallocated_bytes"][0])) - (13.91 - 6.25) * GiB) <= 1
    assert facts["cuda.reserved_unallocated_ratio"] == (0.551, 7, 7)


def test_a_message_wrapped_onto_two_lines_is_read_and_cited_to_both() -> None:
    # Constructed: the pytorch/pytorch#35901 message broken in two, as a narrow terminal or chat window wraps it.
    text = ("CUDA out of memory. Tried to allocate 10.84 GiB (GPU 0; 23.65 GiB total capacity; 1.06 GiB already\n"
            "allocated; 10.26 GiB free; 12.53 GiB reserved in total by PyTorch)\n")
    facts = _facts(text)
    assert facts["cuda.oom_request_bytes"] == (round(10.84 * GiB), 1, 2)
    assert facts["cuda.reserved_unallocated_ratio"] == (0.915, 1, 2)


def test_a_grep_command_is_not_the_message() -> None:
    assert "cuda.oom_request_bytes" not in _facts(
        "$ kubectl logs trainer-0 | grep 'Tried to allocate 2.51 GiB (GPU 0; 15.78 GiB total capacity; 6.25 GiB "
        "already allocated; 283.44 MiB free; 13.91 GiB reserved in total by PyTorch)'")


def test_the_allowed_field_of_a_memory_fraction_is_skipped() -> None:
    # PyTorch 1.13-2.0 (c10/cuda/CUDACachingAllocator.cpp) print "<n> allowed; " after the free figure when a
    # per-process memory fraction is set; the template rendered with sample values.
    figures = read_figures(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 15.77 GiB total "
        "capacity; 15.37 GiB already allocated; 13.62 MiB free; 15.77 GiB allowed; 15.40 GiB reserved in total by "
        "PyTorch)")
    assert figures is not None
    assert figures.requested == 128 * 2**20
    assert figures.reserved_unallocated == round(15.40 * 2**30) - round(15.37 * 2**30)
    assert figures.allocated_share == round(round(15.37 * 2**30) / round(15.77 * 2**30), 3)


def test_the_capacity_of_the_2_1_form_is_read_with_its_misspelling() -> None:
    # https://github.com/carolchenyx/MGFN./issues/35 (description): PyTorch 2.1 wrote "total capacty".
    figures = read_figures(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 has a total capacty of "
        "6.00 GiB of which 0 bytes is free. Of the allocated memory 2.93 GiB is allocated by PyTorch, and 2.30 GiB "
        "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and "
        "PYTORCH_CUDA_ALLOC_CONF")
    assert figures is not None
    assert figures.allocated_share == round(round(2.93 * 2**30) / (6 * 2**30), 3)
