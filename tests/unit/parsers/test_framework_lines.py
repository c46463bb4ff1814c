"""Training frameworks and their launchers (collectors/catalogs/frameworks.yaml): the healthy lines the same programs
print next to the ones the catalog reads give nothing. Real lines carry their thread; the others are rendered from
the program's own format string, cited beside them. The catalog's templates and real pastes are checked by
tests/unit/parsers/test_network_catalog.py."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts as _facts

READ = ("cuda.unavailable", "cuda.oom", "app.child_sigkilled", "train.gpu_left_unused", "dist.launcher_errors")


@pytest.mark.parametrize("line", [
    # https://github.com/Lightning-AI/pytorch-lightning/issues/3355: the GPU found and used
    "GPU available: True, used: True",
    "[2020-09-05 08:54:00,565][lightning][INFO] - TPU available: False, using: 0 TPU cores",
    # Lightning 1.8+ on a Mac: Apple's GPU (mps), not a CUDA GPU left idle (src/lightning/pytorch/trainer/setup.py)
    "GPU available: True (mps), used: False",
    # https://github.com/tensorflow/tensorflow/issues/62994: every TensorFlow import without the CUDA libraries,
    # printed in GPU jobs of other frameworks that merely have TensorFlow installed
    "2024-02-24 17:46:11.024256: I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your "
    "machine, GPU will not be used.",
    # TensorFlow's TensorRT bridge missing its libraries (tensorflow/compiler/tf2tensorrt/utils/py_utils.cc): the GPU
    # is still used
    "2024-03-06 06:16:13.595529: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not "
    "find TensorRT",
    # the device TensorFlow registered (tensorflow/core/common_runtime/gpu/gpu_device.cc)
    "2021-04-28 21:43:45.523333: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1325] Created TensorFlow device "
    "(/job:localhost/replica:0/task:0/device:GPU:0 with 5164 MB memory) -> physical GPU (device: 0, name: NVIDIA "
    "GeForce GTX 1060 with Max-Q Design, pci bus id: 0000:01:00.0, compute capability: 6.1)",
    # the BFC allocator's retry that succeeded (bfc_allocator.cc, 2.x and 1.x wordings)
    "2021-11-05 09:30:48.424570: W tensorflow/core/common_runtime/bfc_allocator.cc:271] Allocator (GPU_0_bfc) ran "
    "out of memory trying to allocate 2.55GiB with freed_by_count=0. The caller indicates that this is not a "
    "failure, but may mean that there could be performance gains if more memory were available.",
    "W tensorflow/core/common_runtime/bfc_allocator.cc:217] Allocator (GPU_0_bfc) ran out of memory trying to "
    "allocate 1.51GiB. The caller indicates that this is not a failure, but may mean that there could be "
    "performance gains if more memory is available.",
    # a tensor on the CPU: the host's memory, not the GPU's (tensorflow/core/framework/op_kernel.cc)
    "ResourceExhaustedError: OOM when allocating tensor with shape[100000,784] and type float on "
    "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu",
    # XLA's pinned host buffers (xla/stream_executor/integrations/tf_allocator_adapter.cc)
    "RESOURCE_EXHAUSTED: Out of host memory while trying to allocate 8589934592 bytes.",
    # JAX probing the backends of other vendors on a healthy CUDA machine (jax/_src/xla_bridge.py, INFO)
    "INFO:jax._src.xla_bridge:Unable to initialize backend 'rocm': NOT_FOUND: Could not find registered platform "
    "with name: \"rocm\". Available platform names are: CUDA",
    # https://github.com/NVIDIA/Megatron-LM/issues/1880: a rank that crashed (SIGSEGV) and the launcher's SIGTERM to
    # the others: no SIGKILL
    "E1223 05:18:02.971000 3304089 site-packages/torch/distributed/elastic/multiprocessing/api.py:882] failed "
    "(exitcode: -11) local_rank: 0 (pid: 3304209) of binary: /root/miniconda",
    "W1223 05:17:58.996000 3304089 site-packages/torch/distributed/elastic/multiprocessing/api.py:908] Sending "
    "process 3304210 closing signal SIGTERM",
    # DeepSpeed's launcher on a rank that raised (deepspeed/launcher/launch.py sigkill_handler) and on a clean exit
    "[2023-06-01 10:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
    "'--local_rank=0'] exits with return code = 1",
    "[2023-06-01 10:00:00,000] [INFO] [launch.py:347:main] Process 4242 exits successfully.",
    # srun on a task that exited with a code, and on a cancelled job (src/srun/launch.c, src/slurmd/slurmstepd/req.c)
    "srun: error: gpu-node07: task 3: Exited with exit code 1",
    "slurmstepd: error: *** STEP 4711.0 ON gpu-node07 CANCELLED AT 2024-05-01T10:00:00 ***",
    # PyTorch's environment report on a machine where CUDA works (torch/utils/collect_env.py)
    "Is CUDA available: True",
])
def test_a_healthy_line_of_the_same_program_reads_nothing(line: str) -> None:
    got = _facts(line)
    assert not [name for name in READ if name in got], got
    assert "oom-killed" not in (got.get("evidence.symptoms") or [])  # type: ignore[operator]


def test_a_gpu_oom_in_tensorflow_and_jax_shows_the_oom_symptom() -> None:
    # TensorFlow 2.4+ and JAX print the allocator's failure, then the op's or XLA's error.
    got = _facts("2025-03-11 02:52:50.483350: W external/xla/xla/tsl/framework/bfc_allocator.cc:291] Allocator "
                 "(GPU_0_bfc) ran out of memory trying to allocate 17.90GiB\n"
                 "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
                 "19216000656 bytes.")
    assert got["cuda.oom"] is True
    assert "oom-killed" in got["evidence.symptoms"]  # type: ignore[operator]


def test_tensorflow_1_x_names_no_device_in_its_oom_line() -> None:
    # TensorFlow 1.0-1.4: the op's device followed on the next line; the GPU's memory is the one that ran out.
    assert _facts("ResourceExhaustedError: OOM when allocating tensor with shape[10000,32,28,28]")["cuda.oom"] is True
