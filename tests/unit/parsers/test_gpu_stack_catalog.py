"""Inference servers and the NVIDIA device plugin (collectors/catalogs/gpu_stack.yaml, round 16): lines real users
pasted (first_sight_pastes.yaml, each with its thread) are read by the entry named into the facts it declares, and
the healthy lines the same programs print beside them read as none of those facts. test_network_catalog.py renders
every template of the catalog with its sample values."""

from __future__ import annotations

import pytest

from collectors.catalogs.signals import signals
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES, joined_facts

BY_ID = {s.spec.id: s for s in signals()}

# (paste id, the entry that reads it, facts the whole paste gives)
READ = [
    ("vllm-pr-6102-preempted-recompute", "vllm-preempted-kv-cache", {"serving.preemptions": 1}),
    ("limo-29-preempted-recompute-101", "vllm-preempted-kv-cache", {"serving.preemptions": 101}),
    ("vllm-10439-no-cache-blocks", "vllm-no-cache-blocks", {"cuda.oom": True}),
    ("qwen3-295-max-seq-len-kv-cache", "vllm-max-seq-len-exceeds-kv-cache",
     {"app.errors": ["config"], "evidence.symptoms": ["crash-loop"]}),
    ("vllm-16118-v1-kv-cache-needed", "vllm-v1-kv-cache-needed-exceeds-available",
     {"app.errors": ["config"], "evidence.symptoms": ["crash-loop"]}),
    ("vllm-20305-free-memory-below-utilization", "vllm-free-memory-below-utilization", {"cuda.oom": True}),
    ("tgi-755-warmup-prefill-tokens", "tgi-warmup-not-enough-memory", {"cuda.oom": True}),
    ("triton-5197-model-table-unavailable", "triton-model-table-unavailable", {"app.errors": ["model-load"]}),
    ("triton-3687-model-table-not-loaded", "triton-model-table-unavailable", {"app.errors": ["model-load"]}),
    ("torchserve-515-load-model-failed", "torchserve-load-model-failed", {"app.errors": ["model-load"]}),
    ("ollama-ov-6-no-compatible-gpus", "ollama-no-compatible-gpus", {"cuda.unavailable": True}),
    ("k8s-device-plugin-139-nvml-docker-runtime", "device-plugin-nvml-init-failed",
     {"gpu.device_plugin_no_gpus": True}),
    ("k8s-device-plugin-303-nvml-quoted-runtime", "device-plugin-nvml-init-failed",
     {"gpu.device_plugin_no_gpus": True}),
    ("k8s-device-plugin-1220-incompatible-strategy", "device-plugin-incompatible-platform",
     {"gpu.device_plugin_no_gpus": True}),
    ("hami-1003-hami-core-device-0-oom", "hami-core-device-oom", {"cuda.oom": True}),
    ("hami-585-cumemoryallocate-failed-res-2", "hami-core-allocate-out-of-memory", {"cuda.oom": True}),
]


@pytest.mark.parametrize(("paste", "entry", "facts"), READ, ids=[r[0] for r in READ])
def test_a_real_paste_is_read_by_its_entry(paste: str, entry: str, facts: dict[str, object]) -> None:
    text = FIRST_SIGHT_PASTES[paste]
    assert any(BY_ID[entry].regex.search(line) for line in text.splitlines()), entry
    got = joined_facts(text)
    for name, value in facts.items():
        if isinstance(value, list):
            assert set(value) <= set(got.get(name) or []), (name, got.get(name))  # type: ignore[call-overload]
        else:
            assert got.get(name) == value, (name, got.get(name))


# Healthy lines of the same programs: a server that loaded its models, a plugin that found NVML, a V1 engine's stats
# line with its KV cache filling but no request preempted, an Ollama that found its GPU.
HEALTHY = {
    "triton-2731-model-table-ready": ("app.errors",),
    "k8s-device-plugin-139-nvml-loaded": ("gpu.device_plugin_no_gpus",),
    "k8s-device-plugin-1552-starting": ("gpu.device_plugin_no_gpus",),
    "vllm-18115-v1-stats-line-kv-91": ("serving.preemptions", "cuda.oom", "app.errors"),
    "ollama-10483-inference-compute-cuda": ("cuda.unavailable",),
    "hami-core-100-msg-lines-limit-usage": ("cuda.oom",),
}


@pytest.mark.parametrize("paste", sorted(HEALTHY))
def test_a_healthy_line_of_the_same_program_reads_as_none_of_them(paste: str) -> None:
    got = joined_facts(FIRST_SIGHT_PASTES[paste])
    assert not [name for name in HEALTHY[paste] if name in got], got


@pytest.mark.parametrize("line", [
    # nvidia-smi's own NVML failure (a driver upgraded without a reboot) is not the device plugin's: no "If this is
    # a GPU node" follows it.
    "Failed to initialize NVML: Driver/library version mismatch",
    # The plugin's closing advice for a node without GPUs names no failure by itself.
    "If this is not a GPU node, you should set up a toleration or nodeSelector to only deploy this plugin on GPU nodes",
    # Triton's table header and a model that loaded.
    "| Model              | Version | Status |",
    "| simple               | 1       | READY                                  |",
    # vLLM's V1 scheduler resuming a preempted request says nothing of how many were preempted
    # (https://github.com/LMCache/LMCache/pull/1361, a comment's log).
    "INFO 08-21 07:17:09 [scheduler.py:495] Preempted request cmpl-e5951453df7d471e8aac25957dbc9096-0 "
    "has been resumed!",
    # HAMi-core's Info line of every allocation (LIBCUDA_LOG_LEVEL=3) and a driver refusal that is no memory
    # shortage (res=1, CUDA_ERROR_INVALID_VALUE).
    "[HAMI-core Info(30:140387636202368:allocator.c:50)]: _usage=1048576 limit=3145728000 new_allocated=2097152",
    "[HAMI-core ERROR (pid:7 thread=140360328144640 allocator.c:115)]: cuMemoryAllocate failed res=1",
])
def test_a_near_miss_reads_as_none_of_the_catalogs_facts(line: str) -> None:
    got = joined_facts(line)
    assert not {"gpu.device_plugin_no_gpus", "app.errors", "serving.preemptions", "cuda.oom"} & set(got), got


def test_a_preemption_counter_at_zero_is_read_as_zero() -> None:
    # The Prometheus counter: 0 says the cache never ran out, which the latency trigger must not take for a symptom.
    got = joined_facts('vllm:num_preemptions_total{engine="0",model_name="Qwen/Qwen3-8B"} 0.0')
    assert got.get("serving.preemptions") == 0
