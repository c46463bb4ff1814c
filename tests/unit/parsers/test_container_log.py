"""Application logs -> cuda.oom, app.*, dns.errors facts (and NCCL facts from a training pod's log)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.logs import container_log
from tests.unit.parsers.cited_fixtures import Row, row_set
from tests.unit.parsers.test_nccl import HEALTHY_INIT

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers"



def read(text: str) -> set[Row]:
    result = container_log.parse(Artifact(id="c1", kind=ArtifactKind.CONTAINER_LOG, content=text))
    assert result.problems == []
    return row_set(result)


FIXTURE_CASES: list[tuple[str, set[Row]]] = [
    ("container_log/cuda_oom.log", {
        ("app.errors", ("traceback",), 3, 3),
        ("cuda.oom", True, 10, 10),
        # "Tried to allocate 2.00 GiB" ... "74.20 GiB is allocated by PyTorch, and 2.91 GiB is reserved by
        # PyTorch but unallocated": 2.91 / (74.20 + 2.91) of the reservation idle.
        ("cuda.oom_request_bytes", 2 * 2**30, 10, 10),
        ("cuda.reserved_unallocated_bytes", round(2.91 * 2**30), 10, 10),
        ("cuda.reserved_unallocated_ratio", 0.038, 10, 10),
        # 74.20 GiB of live tensors on a 79.10 GiB GPU.
        ("cuda.allocated_ratio", 0.938, 10, 10),
    }),
    ("container_log/shm_bus_error.log", {
        ("app.shm_exhausted", True, 1, 1),
        ("app.errors", ("traceback",), 2, 2),
    }),
    ("container_log/shm_no_space.log", {
        ("app.shm_exhausted", True, 3, 3),
    }),
    ("container_log/api_service.log", {
        ("dns.errors", True, 2, 2),
        ("app.retries", True, 3, 3),
        ("app.errors", ("connection-refused",), 4, 4),
        ("app.errors", ("model-load",), 5, 5),
        ("app.errors", ("file-not-found",), 6, 6),
    }),
    ("container_log/config_error.log", {
        ("app.errors", ("traceback",), 2, 2),
        ("app.errors", ("config",), 7, 7),
        ("app.errors", ("permission-denied",), 14, 14),
        ("app.errors", ("missing-module",), 15, 15),
    }),
    # A training pod's log: NCCL facts come through, and NCCL's plugin chatter ("No such file or
    # directory" on line 2) is not an application failure.
    ("nccl/healthy_init.log", HEALTHY_INIT),
]


@pytest.mark.parametrize(("name", "expected"), FIXTURE_CASES, ids=[c[0] for c in FIXTURE_CASES])
def test_fixture_logs(name: str, expected: set[Row]) -> None:
    assert read((FIXTURES / name).read_text(encoding="utf-8")) == expected


LINE_CASES: list[tuple[str, set[tuple[str, object]]]] = [
    # https://github.com/run-ai/runai-model-streamer/issues/67: vLLM's engine init and warm-up time.
    ("INFO 06-02 11:03:55 [core.py:167] init engine (profile, create kv cache, warmup model) took 90.84 seconds",
     {("model.load_seconds", 90.84)}),
    ("INFO 06-02 11:03:55 [gpu_model_runner.py:1933] Graph capturing finished in 37 secs, took 0.45 GiB",
     {("model.load_seconds", 37.0)}),
    ("INFO 06-02 11:03:17 [monitor.py:33] torch.compile takes 45.81 s in total", set()),

    ("RuntimeError: CUDA error: out of memory", {("cuda.oom", True)}),
    ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB", {("cuda.oom", True)}),
    ("java.lang.OutOfMemoryError: Java heap space", set()),
    ("Bus error (core dumped)", {("app.shm_exhausted", True)}),
    ("OSError: [Errno 28] No space left on device: '/dev/shm/sem.mp-4x1'", {("app.shm_exhausted", True)}),
    ("OSError: [Errno 28] No space left on device: '/data/ckpt'", set()),
    ("E1122 dial tcp: lookup api.shop.svc.cluster.local on 10.96.0.10:53: no such host", {("dns.errors", True)}),
    ("curl: (6) Could not resolve host: models.internal", {("dns.errors", True)}),
    ("Host api.github.com not found: 3(NXDOMAIN)", {("dns.errors", True)}),
    ("read tcp 10.0.0.1:443: i/o timeout", set()),
    ("WARNING retry attempt 5 of 10 after 503", {("app.retries", True)}),
    ("attempt 3/5 failed; backing off", {("app.retries", True)}),
    ("ValueError: 1 validation error for Settings", {("app.errors", ("config",))}),
    ("error: environment variable DATABASE_URL is not set", {("app.errors", ("config",))}),
    ("KeyError: 'HF_TOKEN'", {("app.errors", ("config",))}),
    ("KeyError: 'input_ids'", set()),
    ("ConnectionRefusedError: [Errno 111] Connection refused", {("app.errors", ("connection-refused",))}),
    ("Error: EACCES: permission denied, open '/var/run/app.sock'", {("app.errors", ("permission-denied",))}),
    ("OSError: Can't load tokenizer for 'meta-llama/Llama-3-8B'.", {("app.errors", ("model-load",))}),
    ("E1122 model_lifecycle.cc:638] failed to load 'resnet50' version 1: Internal: unable to create TensorRT engine",
     {("app.errors", ("model-load",))}),
    ("RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:", {("app.errors", ("model-load",))}),
    ("ImportError: cannot import name 'soft_unicode' from 'markupsafe'", {("app.errors", ("missing-module",))}),
    ("$ kubectl logs x | grep 'CUDA out of memory'", set()),
]


@pytest.mark.parametrize(("line", "expected"), LINE_CASES)
def test_single_lines(line: str, expected: set[tuple[str, object]]) -> None:
    assert {(name, value) for name, value, _, _ in read(line)} == expected


def test_key_error_after_a_config_read_is_a_config_error() -> None:
    text = '  File "/app/main.py", line 9, in <module>\n    lr = config["optimizer"]["lr"]\nKeyError: \'lr\'\n'
    assert read(text) == {("app.errors", ("config",), 3, 3)}


# A value from the environment that does not convert is a setting that is wrong (fix round 18): the kubelet's service
# links put `tcp://<ip>:<port>` in <SVC>_PORT, which a program reading its own PORT variable cannot parse.
@pytest.mark.parametrize("text", [
    # https://github.com/janeczku/calibre-web/issues/814 (description)
    'File "/app/calibre-web/cps/ub.py", line 64, in <module>\n'
    'DEFAULT_PORT = int(os.environ.get("CALIBRE_PORT", 8083))\n'
    "ValueError: invalid literal for int() with base 10: 'tcp://10.43.76.92:8080'",
    # https://github.com/MISP/misp-modules/issues/413 (description)
    'File "helpers/cache.py", line 27, in\n'
    'port = int(os.getenv("REDIS_PORT")) if os.getenv("REDIS_PORT") else 6379\n'
    "ValueError: invalid literal for int() with base 10: 'tcp://10.100",
    # composed: a hex secret read from a variable, decoded
    '  File "/srv/app/secrets.py", line 12, in load_key\n    key = binascii.a2b_hex(key_env)\n'
    "binascii.Error: Non-hexadecimal digit found",
])
def test_a_value_from_the_environment_that_does_not_convert_is_a_config_error(text: str) -> None:
    assert ("app.errors", ("config",)) in {(name, value) for name, value, _, _ in read(text)}


@pytest.mark.parametrize("text", [
    # https://github.com/meejah/carml/issues/9 (description): a parse of the program's own argument string
    '  File "/usr/lib64/python2.7/site-packages/twisted/internet/endpoints.py", line 1537, in _parseClientTCP\n'
    "    kwargs['port'] = int(args[0])\nValueError: invalid literal for int() with base 10: 'tcp'",
    # composed: a model's config in the frame, a shape error raised in it
    '  File "/app/train.py", line 40, in main\n    model = build(config.model)\n'
    "ValueError: Expected input batch_size (32) to match target batch_size (16).",
    # composed: an RL environment, not the process environment
    '  File "/app/rl.py", line 12, in run\n    obs = env.step(action)\nValueError: invalid action 7',
])
def test_a_value_error_away_from_the_environment_is_no_config_error(text: str) -> None:
    assert ("app.errors", ("config",)) not in {(name, value) for name, value, _, _ in read(text)}


def test_sniff_stays_below_specific_kinds() -> None:
    text = (FIXTURES / "container_log" / "cuda_oom.log").read_text(encoding="utf-8")
    assert 60 <= container_log.sniff(text) <= 70
    assert container_log.sniff("") == 0


# The CUDA runtime's and PyTorch's words for "no usable GPU", rendered as the programs print them: the runtime's
# error strings (cudaGetErrorString of errors 35, 100, 803, 804), the driver API's names (cuInit as TensorFlow
# logs it) and PyTorch's torch/cuda/__init__.py messages.
@pytest.mark.parametrize("line", [
    "RuntimeError: CUDA error: no CUDA-capable device is detected",
    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
    "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 804: forward "
    "compatibility was attempted on non supported HW",
    "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no "
    "CUDA-capable device is detected",
    "failed call to cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported display driver / cuda "
    "driver combination",
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed "
    "a driver from http://www.nvidia.com/Download/index.aspx",
    "AssertionError: Torch not compiled with CUDA enabled",
])
def test_no_usable_gpu_is_read_in_every_upstream_wording(line: str) -> None:
    assert ("cuda.unavailable", True, 1, 1) in read(line)


def test_a_real_cuda_803_warning_is_read() -> None:
    # https://github.com/opendatahub-io/ilab-on-ocp/pull/39 (verbatim line from the pasted eval log)
    line = ("/usr/local/lib64/python3.11/site-packages/torch/cuda/__init__.py:118: UserWarning: CUDA initialization: "
            "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
            "NumCudaDevices() that might have already set an error? Error 803: system has unsupported display "
            "driver / cuda driver combination (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)")
    assert ("cuda.unavailable", True, 1, 1) in read(line)


def test_a_cuda_device_named_in_passing_is_not_unavailability() -> None:
    assert not any(name == "cuda.unavailable" for name, *_ in read("Using CUDA-capable device 0: NVIDIA A100"))


@pytest.mark.parametrize("line", [
    # https://github.com/3dem/model-angelo/issues/60 (DerLorenz's comment of 2023-08-03, verbatim)
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
    "driver is installed and running.",
    # https://github.com/NVIDIA/nvidia-docker/issues/1163 (description, verbatim)
    "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver "
    "is properly installed and present in your system.",
])
def test_nvidia_smi_reaching_no_driver_is_no_usable_gpu(line: str) -> None:
    assert ("cuda.unavailable", True, 1, 1) in read(line)


def test_nvidia_smi_named_in_a_healthy_line_is_not_unavailability() -> None:
    # Composed from nvidia-smi's table banner: a working nvidia-smi names itself too.
    line = "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |"
    assert not any(name == "cuda.unavailable" for name, *_ in read(line))
