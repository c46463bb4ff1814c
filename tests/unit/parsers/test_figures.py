"""Numbers in any layout through the metric alias catalog (collectors/parsers/metrics/figures.py and
catalogs/figures.yaml)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.catalogs.figures import Alias, catalog
from collectors.models import Artifact, ArtifactKind, Fact
from collectors.parsers.metrics import figures
from collectors.parsers.metrics.metric_serving import FIGURES, SERVING_GAUGES
from collectors.parsers.registry import parse_artifact


def read(text: str) -> list[Fact]:
    result = figures.read(Artifact(id="p", kind=ArtifactKind.TEXT, content=text))
    assert not result.problems
    return result.facts


def values(text: str) -> dict[str, object]:
    """Each fact's value as the fact set keeps it: the highest of several readings (every fact here is `max`)."""
    out: dict[str, object] = {}
    for f in read(text):
        prev = out.get(f.name)
        out[f.name] = f.value if prev is None or f.value > prev else prev  # type: ignore[operator]
    return out


# ---------------------------------------------------------------- the catalog, rendered as each program prints it

def _sample(entry: Alias) -> tuple[str, float]:
    """A sample number for the entry's unit, as printed, and its value in that unit."""
    return ("0.42", 0.42) if entry.unit == "ratio" else ("42", 42.0)


CASES = [(entry, template) for entry in catalog().entries for template in entry.render]


@pytest.mark.parametrize(("entry", "template"), CASES,
                         ids=[f"{e.figure}:{t[:40]}" for e, t in CASES])
def test_every_catalog_entry_is_read_as_its_program_prints_it(entry: Alias, template: str) -> None:
    printed, value = _sample(entry)
    text = template.replace("<N>", printed)
    found = [r for r in figures._readings(text, text.split("\n")) if r.figure == entry.figure]
    assert found, f"{entry.program}: {text!r} not read"
    expected = value * 100 if entry.unit == "ratio" and found[0].unit == "percent" else value
    assert found[0].value == pytest.approx(expected)


def test_every_fact_of_the_catalog_is_in_the_vocabulary_and_every_entry_cites_its_source() -> None:
    assert {f.fact for f in catalog().facts} >= {"gpu.util_percent", "serving.waiting_requests",
                                                  "serving.kv_cache_usage_ratio", "latency.queue_share"}
    assert all(e.source and e.versions and e.program for e in catalog().entries)


# ---------------------------------------------------------------- real pastes, verbatim, whole lines

REAL = [
    pytest.param(
        # https://github.com/intel/llm-scaler/issues/391 (description): vLLM v1 stats lines, a queue that never drains
        "(APIServer pid=851) INFO 04-28 22:54:32 [loggers.py:257] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Avg generation throughput: 5.4 tokens/s, Running: 1 reqs, Waiting: 14 reqs, GPU KV cache usage: 76.5%, "
        "Prefix cache hit rate: 92.0%\n"
        "(APIServer pid=851) INFO:     10.109.20.86:59146 - \"GET /metrics HTTP/1.1\" 200 OK\n",
        {"serving.waiting_requests": 14, "serving.running_requests": 1, "serving.kv_cache_usage_ratio": 0.765,
         "serving.decode_tokens_per_second": 5.4,
         "serving.decode_only_tokens_per_second": 5.4},
        id="llm-scaler-391-vllm-v1-waiting-14"),
    pytest.param(
        # https://github.com/vllm-project/vllm/issues/3094 (description): vLLM 0.3/0.4 line, Pending and CPU KV cache
        "INFO 02-28 21:48:18 metrics.py:161] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 44.9 "
        "tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 82.1%, CPU KV cache usage: "
        "0.0%\n",
        {"serving.waiting_requests": 3, "serving.running_requests": 2, "serving.kv_cache_usage_ratio": 0.821,
         "serving.decode_tokens_per_second": 22.45,
         "serving.decode_only_tokens_per_second": 22.45},
        id="vllm-3094-pending-3-cpu-kv-not-gpu"),
    pytest.param(
        # https://github.com/ai-dynamo/dynamo/issues/4087 (description): a healthy engine, nothing waiting
        "(APIServer pid=1240) INFO 11-04 12:26:52 [loggers.py:127] Engine 000: Avg prompt throughput: 1759.2 tokens/s, "
        "Avg generation throughput: 1039.3 tokens/s, Running: 16 reqs, Waiting: 0 reqs, GPU KV cache usage: 21.0%, "
        "Prefix cache hit rate: 1.4%\n",
        {"serving.waiting_requests": 0, "serving.running_requests": 16, "serving.kv_cache_usage_ratio": 0.21,
         "serving.decode_tokens_per_second": 64.9562},
        id="dynamo-4087-waiting-0"),
    pytest.param(
        # https://github.com/vllm-project/vllm/issues/12153 (description): vLLM on CPU, a tenth of a token a second
        "INFO 01-17 07:57:05 metrics.py:467] Avg prompt throughput: 0.1 tokens/s, Avg generation throughput: 0.0 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.0%, CPU KV cache usage: "
        "0.0%.\n"
        "INFO 01-17 07:57:22 metrics.py:467] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.1 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.0%, CPU KV cache usage: "
        "0.0%.\n"
        "INFO 01-17 07:57:37 metrics.py:467] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.1 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.0%, CPU KV cache usage: "
        "0.0%.\n",
        {"serving.waiting_requests": 0, "serving.running_requests": 1, "serving.kv_cache_usage_ratio": 0.0,
         "serving.decode_tokens_per_second": 0.0667,
         # the first window also prefilled (0.1 prompt tokens/s): decoding alone is timed by the other two
         "serving.decode_only_tokens_per_second": 0.1},
        id="vllm-12153-cpu-decode-0-1-tokens-per-second"),
    pytest.param(
        # https://github.com/chatchat-space/Langchain-Chatchat/issues/2687 (description): a window the request only
        # started in shows 0.0 tokens/s; the block's sums keep the rate at what the server does (about 27)
        "INFO 01-17 10:06:40 llm_engine.py:624] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.5%, CPU KV cache usage: "
        "0.0%\n"
        "INFO 01-17 10:06:45 llm_engine.py:624] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 36.4 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 2.4%, CPU KV cache usage: "
        "0.0%\n"
        "INFO 01-17 10:06:50 llm_engine.py:624] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 36.9 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 4.4%, CPU KV cache usage: "
        "0.0%\n"
        "INFO 01-17 10:06:55 llm_engine.py:624] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 37.0 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 6.5%, CPU KV cache usage: "
        "0.0%\n",
        {"serving.waiting_requests": 0, "serving.running_requests": 1, "serving.kv_cache_usage_ratio": 0.065,
         "serving.decode_tokens_per_second": 27.575,
         "serving.decode_only_tokens_per_second": 27.575},
        id="chatchat-2687-first-window-zero-then-36-tokens-per-second"),
    pytest.param(
        # https://github.com/vllm-project/vllm/issues/26349 (description): vLLM v1, one request at about 150 tokens/s,
        # then a window whose request finished (Running: 0)
        "(APIServer pid=19189) INFO 10-06 11:26:41 [loggers.py:127] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Avg generation throughput: 149.6 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 33.4%, "
        "Prefix cache hit rate: 16.4%\n"
        "(APIServer pid=19189) INFO 10-06 11:26:51 [loggers.py:127] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Avg generation throughput: 148.3 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 36.3%, "
        "Prefix cache hit rate: 16.4%\n"
        "(APIServer pid=19189) INFO 10-06 11:27:01 [loggers.py:127] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Avg generation throughput: 126.6 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, "
        "Prefix cache hit rate: 16.4%\n",
        {"serving.waiting_requests": 0, "serving.running_requests": 1, "serving.kv_cache_usage_ratio": 0.363,
         "serving.decode_tokens_per_second": 212.25,
         # the window whose request finished (Running: 0) times no request
         "serving.decode_only_tokens_per_second": 148.95},
        id="vllm-26349-v1-150-tokens-per-second"),
    pytest.param(
        # https://github.com/linkerd/linkerd2/issues/1699 (description): `linkerd top deploy` of Linkerd 2.0, its
        # routes' fastest requests 6-7 ms (the slowest route's fastest is kept)
        "Source                  Destination             Path                                                    Count  Best   Worst  Last\n"  # noqa: E501
        "web-6fd5d8d475-g9w5z    books-78d5b94b64-cxbbc  /books.json                                             434    7ms    142ms  27ms\n"  # noqa: E501
        "web-6fd5d8d475-g9w5z    books-78d5b94b64-rx99s  /books.json                                             423    6ms    114ms  34ms\n"  # noqa: E501
        "web-6fd5d8d475-svj6g    books-78d5b94b64-74ccn  /books.json                                             423    6ms    119ms  69ms\n"  # noqa: E501
        "web-6fd5d8d475-svj6g    books-78d5b94b64-cxbbc  /books.json                                             376    6ms    145ms  13ms\n",  # noqa: E501
        {"latency.fastest_seconds": 0.007},
        id="linkerd2-1699-top-fastest-7ms"),
    pytest.param(
        # https://github.com/vllm-project/vllm/pull/33743 (description): `vllm bench serve` result table
        "---------------Time to First Token----------------\n"
        "Mean TTFT (ms):                          2633.55\n"
        "Median TTFT (ms):                        2648.65\n"
        "P99 TTFT (ms):                           4610.48\n"
        "-----Time per Output Token (excl. 1st token)------\n"
        "Mean TPOT (ms):                          51.78\n",
        {"serving.ttft_seconds": 4.6105},
        id="vllm-pr-33743-bench-serve-ttft"),
    pytest.param(
        # https://github.com/vllm-project/vllm/pull/7062 (description): benchmark_serving.py, a TTFT well in budget
        "---------------Time to First Token----------------\n"
        "Mean TTFT (ms):                          157.75    \n"
        "Median TTFT (ms):                        118.73    \n"
        "P90 TTFT (ms):                           332.99    \n"
        "P95 TTFT (ms):                           400.04    \n"
        "P99 TTFT (ms):                           532.92    \n",
        {"serving.ttft_seconds": 0.5329},
        id="vllm-pr-7062-benchmark-serving-ttft"),
    pytest.param(
        # https://github.com/triton-inference-server/server/issues/5106 (description): queue 64 us of 32435 us
        "> nv_inference_request_success{model=\"gpt2_16\",version=\"1\"} 1\n"
        "nv_inference_request_failure{model=\"gpt2_16\",version=\"1\"} 0\n"
        "nv_inference_request_failure{model=\"gpt2_16\",version=\"1\"} 0\n"
        "nv_inference_exec_count{model=\"gpt2_16\",version=\"1\"} 1\n"
        "nv_inference_request_duration_us{model=\"gpt2_16\",version=\"1\"} 32435\n"
        "nv_inference_queue_duration_us{model=\"gpt2_16\",version=\"1\"} 64\n"
        "nv_inference_compute_input_duration_us{model=\"gpt2_16\",version=\"1\"} 4629\n",
        {"latency.queue_share": 0.002, "http.error_ratio": 0.0},
        id="triton-5106-queue-small-share"),
    pytest.param(
        # https://github.com/triton-inference-server/server/issues/2755 (description): Triton's GPU gauge, 0-1
        "# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)\n"
        "# TYPE nv_gpu_utilization gauge\n"
        "nv_gpu_utilization{gpu_uuid=\"GPU-d4d0dbb0-037e-652e-6df4-a742b597738c\"} 0.120000\n",
        {"gpu.util_percent": 12.0},
        id="triton-2755-nv-gpu-utilization-ratio"),
]


REAL.append(pytest.param(
    # https://github.com/NVIDIA/DCGM/issues/244 (description): dcgmi dmon's table, N/A where a field was not sampled
    "[root@b76d14397 sanmu]# dcgmi dmon -e 1001,1002,1003,1004,1005,1006,1007,1008\n"
    "#Entity    GRACT        SMACT        SMOCC        TENSO        DRAMA        FP64A        FP32A        FP16A\n"
    "ID\n"
    "GPU 0      N/A          N/A          N/A          N/A          N/A          N/A          N/A          N/A\n"
    "GPU 1      N/A          N/A          N/A          N/A          N/A          N/A          N/A          N/A\n"
    "GPU 0      0.888        N/A          N/A          0.178        N/A          N/A          N/A          0.001\n"
    "GPU 1      N/A          0.777        N/A          N/A          N/A          0.000        0.046        N/A\n",
    {"gpu.gr_engine_active_ratio": 0.888, "gpu.sm_active_ratio": 0.777, "gpu.tensor_active_ratio": 0.178},
    id="dcgm-244-dcgmi-dmon-profiling-table"))


REAL.append(pytest.param(
    # https://github.com/triton-inference-server/server/issues/6448 (description): no failures, a 0 error share
    "`# HELP nv_inference_request_success Number of successful inference requests, all batch sizes\n"
    "# TYPE nv_inference_request_success counter\n"
    "nv_inference_request_success{model=\"triton-vllm-code-llama-model\",version=\"1\"} 2639\n"
    "# HELP nv_inference_request_failure Number of failed inference requests, all batch sizes\n"
    "# TYPE nv_inference_request_failure counter\n"
    "nv_inference_request_failure{model=\"triton-vllm-code-llama-model\",version=\"1\"} 0\n",
    {"http.error_ratio": 0.0},
    id="triton-6448-success-and-failure-counters"))


REAL.append(pytest.param(
    # https://github.com/huggingface/text-embeddings-inference/issues/305 (comment by lambdaupb): TEI's span fields,
    # each request queued well under a millisecond (µs, read as the seconds it is)
    '2025-08-09T19:36:02.798333Z  INFO openai_embed{total_time="1.207716998s" tokenization_time="11.232786ms" '
    'queue_time="686.203µs" inference_time="1.195713965s"}: text_embeddings_router::http::server: '
    'router/src/http/server.rs:1290: Success\n'
    '2025-08-09T19:36:03.579418Z  INFO openai_embed{total_time="685.148571ms" tokenization_time="8.812018ms" '
    'queue_time="724.303µs" inference_time="675.535478ms"}: text_embeddings_router::http::server: '
    'router/src/http/server.rs:1290: Success\n',
    {"serving.queue_seconds": 0.0007},  # rounded to 4 places as every figure
    id="tei-305-span-queue-time-microseconds"))


def test_tgi_span_times_in_every_unit_rust_prints() -> None:
    """Rust's Duration Debug form picks the unit by size; each is read in seconds, and ns is not taken for s."""
    line = ('generate{{total_time="{t}" validation_time="1.1ms" queue_time="{q}" inference_time="2s" '
            'time_per_token="{p}"}}')
    got = values(line.format(t="3s", q="2.5s", p="40ms"))
    assert got["serving.queue_seconds"] == pytest.approx(2.5)
    assert got["serving.token_seconds"] == pytest.approx(0.04)
    assert values(line.format(t="3s", q="812ns", p="1.5s"))["serving.queue_seconds"] == 0.0  # not 812 s
    assert values(line.format(t="3s", q="90µs", p="1.5s"))["serving.token_seconds"] == pytest.approx(1.5)


def test_queue_time_alone_is_no_server_span() -> None:
    """A SLURM script's queue_time="24:00:00" or a bare queue_time= is not TGI's: no other span field beside it."""
    assert "serving.queue_seconds" not in values('queue_time="5780"')
    assert "serving.queue_seconds" not in values("queue_time=161s and more")

# Decoding timed alone (serving.decode_only_tokens_per_second): SGLang's Decode batch lines, each over its own
# #running-req (its Prefill batch lines hold #running-req and no throughput), and no vLLM window that also prefilled.
REAL.append(pytest.param(
    # https://github.com/sgl-project/sglang/issues/4759 (description): throughput fell after speculative decoding was
    # turned on; 32 requests share 39 tokens/s
    "[2025-03-24 02:56:20 TP0] Prefill batch. #new-seq: 1, #new-token: 128, #cached-token: 1, token usage: 0.00, "
    "#running-req: 0, #queue-req: 0, \n"
    "[2025-03-24 02:56:25 TP0] Prefill batch. #new-seq: 2, #new-token: 258, #cached-token: 0, token usage: 0.00, "
    "#running-req: 0, #queue-req: 0, \n"
    "[2025-03-24 02:56:26 TP0] Prefill batch. #new-seq: 30, #new-token: 3810, #cached-token: 60, token usage: 0.00, "
    "#running-req: 2, #queue-req: 68, \n"
    "[2025-03-24 02:56:41 TP0] Decode batch. #running-req: 32, #token: 7352, token usage: 0.01, accept len: 2.54, "
    "gen throughput (token/s): 39.33, largest-len: 0, #queue-req: 68, \n",
    {"serving.waiting_requests": 68, "serving.running_requests": 32, "serving.kv_cache_usage_ratio": 0.01,
     "serving.decode_tokens_per_second": 1.1568, "serving.decode_only_tokens_per_second": 1.2291},
    id="sglang-4759-speculative-32-running-39-tokens-per-second"))
REAL.append(pytest.param(
    # https://github.com/sgl-project/sglang/pull/22166 (description): SGLang 0.5's "Decode batch," form, a healthy
    # benchmark at 51 tokens/s per request
    "[2026-04-05 20:02:51] Decode batch, #running-req: 32, #token: 11179, token usage: 0.08, cuda graph: True, gen "
    "throughput (token/s): 1635.11, #queue-req: 0\n"
    "[2026-04-05 20:02:51] INFO:     127.0.0.1:40052 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n"
    "[2026-04-05 20:02:51] Prefill batch, #new-seq: 1, #new-token: 158, #cached-token: 0, token usage: 0.08, "
    "#running-req: 31, #queue-req: 0, cuda graph: True, input throughput (token/s): 559.53\n",
    {"serving.waiting_requests": 0, "serving.running_requests": 32, "serving.kv_cache_usage_ratio": 0.08,
     "serving.decode_tokens_per_second": 25.9541, "serving.decode_only_tokens_per_second": 51.0972},
    id="sglang-pr-22166-decode-batch-comma-51-tokens-per-second"))

# fix round f8: TorchServe's QueueTime metric line (the request's wait in the frontend's job queue), and the same
# name quoted in the reporter's sentence.
REAL.append(pytest.param(
    # https://github.com/pytorch/serve/issues/3008 (description): torchserve 0.7.2, one request waited 19 s
    "if I am considering correctly the `QueueTime.ms:19428` means this particular request had to wait for 19 sec "
    "for processing\n"
    "2024-03-08T08:44:35,261 [INFO ] W-9003-vehicledetection TS_METRICS - QueueTime.ms:0|#Level:Host|#hostname:"
    "ai-gpu-service-5b585f9b9d-x4r7z,timestamp:1709887475\n"
    "2024-03-08T08:44:35,261 [INFO ] W-9003-vehicledetection TS_METRICS - WorkerThreadTime.ms:0|#Level:Host|"
    "#hostname:ai-gpu-service-5b585f9b9d-x4r7z,timestamp:1709887475\n",
    {"serving.queue_seconds": 19.428},
    id="torchserve-3008-queuetime-ms-19428"))


@pytest.mark.parametrize(("text", "expected"), REAL)
def test_real_pastes(text: str, expected: dict[str, object]) -> None:
    got = values(text)
    for name, value in expected.items():
        assert got.get(name) == pytest.approx(value), name
    assert set(got) == set(expected)


def test_cpu_kv_cache_is_not_the_gpu_kv_cache() -> None:
    # The vLLM 0.4 line prints both; the GPU's is the one that fills.
    text = "Running: 2 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 1.0%, CPU KV cache usage: 90.0%"
    assert values(text)["serving.kv_cache_usage_ratio"] == pytest.approx(0.01)


# ---------------------------------------------------------------- layouts, units and what is not read

@pytest.mark.parametrize(("text", "fact", "value", "parser"), [
    ("num_requests_waiting=184", "serving.waiting_requests", 184, "figures"),
    ("GPU-Util 0%", "gpu.util_percent", 0.0, "figures"),
    ("GPU utilization is 0%", "gpu.util_percent", 0.0, "stated:figures"),
    ("the gpu util stays around 12 %", "gpu.util_percent", 12.0, "stated:figures"),
    ("nv_inference_queue_duration_us : 4.718189K\nnv_inference_request_duration_us : 9.29832K",
     "latency.queue_share", 0.5074, "figures"),
    ("- TTFT p50 = 60s (requests stuck waiting)", "serving.ttft_seconds", 60.0, "figures"),
    ("vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.998", "serving.kv_cache_usage_ratio", 0.998, "figures"),
    ("tgi_queue_size 31", "serving.waiting_requests", 31, "figures"),
])
def test_layouts(text: str, fact: str, value: float, parser: str) -> None:
    facts = [f for f in read(text) if f.name == fact]
    assert [f.value for f in facts] == [pytest.approx(value)]
    assert facts[0].parser == parser


def test_a_table_gives_one_reading_per_gpu() -> None:
    text = "| GPU | util % | mem MiB |\n|---|---|---|\n| 0 | 95 | 100 |\n| 1 | 3 | 100 |\n"
    got = {(f.subject, f.value) for f in read(text) if f.name == "gpu.util_percent"}
    assert got == {("gpu 0", 95.0), ("gpu 1", 3.0)}


def test_nvidia_smi_csv_query_gives_each_gpu_s_framebuffer_share() -> None:
    # nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total --format=csv: one row per GPU, the
    # fullest GPU's share kept (a block's sums would average a full GPU with an empty one)
    text = ("index, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"
            "0, 3 %, 30000 MiB, 81920 MiB\n"
            "1, 0 %, 4 MiB, 81920 MiB\n")
    got = values(text)
    assert got["gpu.util_percent"] == 3.0
    assert got["gpu.fb_used_ratio"] == pytest.approx(0.3662)
    # memory.used without its total, or a used figure above the total, gives no share
    assert "gpu.fb_used_ratio" not in values("index, memory.used [MiB]\n0, 30000 MiB\n")
    assert "gpu.fb_used_ratio" not in values("index, memory.used [MiB], memory.total [MiB]\n0, 90000 MiB, 81920 MiB\n")


@pytest.mark.parametrize("text", [
    "$ nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total --format=csv,noheader\n"
    "0, 3 %, 30000 MiB, 81920 MiB\n1, 0 %, 4 MiB, 81920 MiB\n",
    "$ nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits\n"
    "0, 3, 30000, 81920\n1, 0, 4, 81920\n",
    "$ nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total --format=csv\n"
    "index, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"
    "0, 3 %, 30000 MiB, 81920 MiB\n1, 0 %, 4 MiB, 81920 MiB\n",
])
def test_a_query_without_its_header_is_read_by_the_columns_its_command_names(text: str) -> None:
    got = values(text)
    assert got["gpu.util_percent"] == 3.0
    assert got["gpu.fb_used_ratio"] == pytest.approx(0.3662)


def test_nvidia_smi_csv_query_is_a_table() -> None:
    text = "index, utilization.gpu [%], memory.used [MiB]\n0, 7 %, 1 MiB\n1, 88 %, 9000 MiB\n"
    assert sorted(f.value for f in read(text) if f.name == "gpu.util_percent") == [7.0, 88.0]


@pytest.mark.parametrize("text", [
    "gpu_util : 4.67K",  # 4670 is no utilisation: not read rather than guessed
    "why is GPU utilization 0%?",  # a question
    "is the GPU utilization is 0% expected?",
    "GPU utilization is not 0%",  # negated
    "the gpu utilization is not stable from 0% to 90%",
    "GPU-Util: 300 MiB",  # a unit of another quantity
    "Waiting: 5",  # a word too common to trust without vLLM's line around it
    "Pods Statuses:  1 Running / 0 Waiting / 0 Succeeded / 0 Failed",
    "GPU util is 3 nodes",  # a sentence says its unit; a bare number after "is" may be anything
    "not 20% GPU utilization",
    "gpu stays at 30% GPU-Util?",
])
def test_not_read(text: str) -> None:
    assert read(text) == []


def test_dcgmi_dmon_rows_keep_their_gpu_and_mig_instance_apart() -> None:
    text = "  # Entity  GRACT  SMACT\n      Id\n   GPU 0  0.429  0.429\n   GPU-I 1  0.750  0.750\n"
    got = {(f.subject, f.value) for f in read(text) if f.name == "gpu.sm_active_ratio"}
    assert got == {("gpu 0", 0.429), ("gpu-i 1", 0.75)}


@pytest.mark.parametrize(("text", "value"), [
    ("only 20% GPU utilization on each card", 20.0),
    ("with a GPU utilization of 20%", 20.0),
    ("GPU utilization is only 4% and never above 10%", 4.0),
])
def test_prose_states_a_figure_with_its_unit(text: str, value: float) -> None:
    facts = read(text)
    assert [(f.name, f.value, f.parser) for f in facts] == [("gpu.util_percent", value, "stated:figures")]


def test_failed_over_all_requests() -> None:
    text = "tgi_request_success 190\ntgi_request_failure{err=\"overloaded\"} 10\n"
    assert values(text) == {"http.error_ratio": 0.05}


def test_a_busy_gpu_reads_busy() -> None:
    # The negative for gpu-underutilized: a GPU at 95 % gives 95, which its trigger (< 40) does not take.
    assert values("GPU utilization is 95%") == {"gpu.util_percent": 95.0}


# ---------------------------------------------------------------- properties

_WORDS = st.sampled_from(["GPU-Util", "Waiting", "Running", "reqs", ":", "=", " ", "%", "K", "M", "{", "}", "|",
                          "\n", "is", "not", "0", "4.67", "1,234", "ms", "vllm:num_requests_waiting", "TTFT", "?",
                          "nv_inference_queue_duration_us", "---", ",", "\t", "µs"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, max_size=60).map("".join))
def test_never_raises_on_catalog_words_in_any_order(text: str) -> None:
    for f in read(text):
        assert f.value is not None


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=400))
def test_never_raises_on_any_text(text: str) -> None:
    read(text)


def _seconds(text: str) -> float:
    start = time.perf_counter()
    read(text)
    return time.perf_counter() - start


def test_time_grows_linearly_with_adversarial_input() -> None:
    # Names with no value after them, over and over on one line and on many: RE2 stays linear.
    unit = "GPU-Util GPU Util gpu_util: : = | Running Waiting " * 50 + "\n"
    small, large = _seconds(unit * 20), _seconds(unit * 160)
    assert large < small * 8 * 4 + 0.5


def test_a_pasted_vllm_line_reaches_the_facts_once_through_the_registry() -> None:
    text = ("INFO 02-28 21:48:18 metrics.py:161] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 44.9 "
            "tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 82.1%, CPU KV cache "
            "usage: 0.0%\n")
    result = parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=text, source="paste"))
    waiting = [f for f in result.facts if f.name == "serving.waiting_requests"]
    assert [(f.value, f.parser, f.citation.start) for f in waiting] == [(3, "figures", 1)]


def test_a_scrape_read_by_its_parser_is_not_read_twice() -> None:
    text = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1"} 7\n'
    result = parse_artifact(Artifact(id="p", kind=ArtifactKind.PROMETHEUS_METRICS, content=text, source="paste"))
    assert [(f.value, f.parser) for f in result.facts if f.name == "gpu.util_percent"] == [(7.0, "prometheus_text")]


def test_the_scrape_rules_know_the_catalogs_serving_gauges() -> None:
    listed = {name: FIGURES[e.figure] for e in catalog().entries if e.figure in FIGURES
              for name in e.names if "_" in name or ":" in name}
    assert listed == SERVING_GAUGES


def test_a_live_scrape_gives_the_serving_facts() -> None:
    text = 'vllm:num_requests_waiting{model_name="m"} 184\nvllm:gpu_cache_usage_perc{model_name="m"} 0.998\n'
    result = parse_artifact(Artifact(id="s", kind=ArtifactKind.PROMETHEUS_METRICS, content=text, source="prometheus"))
    assert {f.name: f.value for f in result.facts} == {"serving.waiting_requests": 184,
                                                        "serving.kv_cache_usage_ratio": 0.998}


# genai-perf's rich table, rendered as its console exporter prints it (row labels over avg/min/max/p99 columns).
GENAI_PERF = (
    "┃                Statistic ┃      avg ┃    min ┃      max ┃      p99 ┃      p90 ┃      p75 ┃\n"
    "┡━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━┩\n"
    "│ Time To First Token (ms) │ {avg} │  12.39 │ {max} │ {p99} │   300.68 │   250.56 │\n")


def test_a_labelled_row_of_statistics_gives_its_tail_not_its_worst_request() -> None:
    got = values(GENAI_PERF.format(avg="   400.26", max="9,917.25", p99=" 2,817.09"))
    assert got["serving.ttft_seconds"] == pytest.approx(2.817, abs=1e-3)


def test_a_labelled_row_under_the_objective_names_no_latency() -> None:
    got = values(GENAI_PERF.format(avg="   400.26", max="9,917.25", p99="   817.09"))
    assert got["serving.ttft_seconds"] == pytest.approx(0.817, abs=1e-3)  # read, and below the 2 s the trigger asks for


def test_a_labelled_row_of_words_is_no_row_of_figures() -> None:
    assert "serving.ttft_seconds" not in values("| Time To First Token (ms) | lower is better | see notes |")


# https://github.com/triton-inference-server/perf_analyzer/issues/437 (description): genai-perf's table without TTFT.
GENAI_PERF_437 = (
    "┃            Statistic ┃           avg ┃           min ┃           max ┃           p99 ┃           p90 ┃"
    "           p75 ┃\n"
    "┡━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇"
    "━━━━━━━━━━━━━━━┩\n"
    "│ Request latency (ns) │ 4,110,623,430 │ 2,272,022,940 │ 5,252,536,691 │ 5,217,352,175 │ 4,900,691,530 │"
    " 4,626,917,531 │\n"
    "│     Num output token │           331 │           189 │           414 │           412 │           392 │"
    "           376 │\n")


def test_a_genai_perf_table_without_a_catalogued_row_gives_nothing() -> None:
    assert values(GENAI_PERF_437) == {}


def test_an_exporter_s_gpu_utilisation_per_container_is_the_job_s() -> None:
    # tkestack/gpu-manager#127 (https://github.com/tkestack/gpu-manager/issues/127), the exporter's scrape.
    text = ("# HELP container_gpu_utilization gpu utilization\n"
            "# TYPE container_gpu_utilization gauge\n"
            'container_gpu_utilization{container_name="gpu-test-container",gpu="total",namespace="default",'
            'node="ip",pod_name="gpu-test"} 0_\n'
            "# HELP container_request_gpu_utilization request of gpu utilization\n"
            "# TYPE container_request_gpu_utilization gauge\n"
            'container_request_gpu_utilization{container_name="gpu-test-container",namespace="default",node="ip",'
            'pod_name="gpu-test",req_of_gpu="total"} 0.5\n')
    got = {f.name: f.value for f in read(text)}
    assert got == {"gpu.job_util_percent": 0.0}  # the request (a share of a GPU asked for) is no utilisation


def test_reportseff_gpu_columns_are_a_batch_job_s_gpus() -> None:
    # reportseff -g prints GPUEff and GPUMem for the GPUs Slurm gave the job (means over them, from jobstats'
    # admin comment); "---" in another column holds no value and keeps the row under its header. The busy job's
    # figures are reportseff's own test data (troycomi/reportseff tests/test_job.py: GPUEff 29.4, GPUMem 99.8).
    busy = ("JobID               State       Elapsed  TimeEff   CPUEff   MemEff   GPUEff   GPUMem \n"
            "1234567           COMPLETED    01:02:03   51.2%      ---     11.7%    29.4%    99.8%  \n")
    got = values(busy)
    assert got["gpu.job_util_avg_percent"] == 29.4
    assert got["gpu.fb_used_ratio"] == pytest.approx(0.998)


@pytest.mark.parametrize("text", [
    # A job given no GPU: reportseff prints "---" in both GPU columns (the old output of reportseff#19).
    "JobID       State       Elapsed  TimeEff   CPUEff   MemEff   GPUEff   GPUMem \n"
    "649436    COMPLETED    00:00:13   0.0%      ---     11.7%     ---      ---\n",
    # A CPU job's table with a "---" cell (https://github.com/troycomi/reportseff/issues/37): no GPU figure at all.
    "    JobID    State          Elapsed  TimeEff   CPUEff   MemEff\n"
    "  6196869  COMPLETED    12-14:16:39    ---      5.0%     0.9%\n",
])
def test_a_reportseff_row_without_gpu_figures_gives_none(text: str) -> None:
    got = values(text)
    assert "gpu.job_util_avg_percent" not in got and "gpu.fb_used_ratio" not in got, got
