"""Fix round 19 (issue 24, helper i3): classes of text that first-sight cases of gpu-underutilized, nccl-hang,
gpu-xid and pending showed unread. Each is read from a line of ANOTHER public thread than the case (URL beside it),
and a text of the same shape must not be read; composed texts say so."""
# ruff: noqa: RUF001  (full-width punctuation is what the Chinese sentences are written with)

from __future__ import annotations

import pytest

from collectors.catalogs.stated import stated_terms
from tests.unit.parsers.paste_facts import joined_facts as facts
from tests.unit.parsers.paste_facts import split_joined_facts as pasted


def _term(term_id: str):  # type: ignore[no-untyped-def]
    return next(t for t in stated_terms() if t.spec.id == term_id)


# ---- a GPU-Util figure said with the GPU as the subject (stated.yaml gpu-subject-figure) ----

@pytest.mark.parametrize(("text", "value"), [
    # https://github.com/BerkeleyAutomation/sd-maskrcnn/issues/30
    ("I am monitoring CPU and GPU usage, sometimes CPU reaches 100%, but GPU between 1-15%.", 1.0),
    # https://github.com/sml2h3/captcha_trainer_pytorch/issues/2
    ("开始训练之后cpu使用率大幅提升，GPU只有20% 感觉训练的有些慢。", 20.0),
    # https://github.com/haotian-liu/LLaVA/issues/1222
    ("My RTX 4090 is only at about 20%.", 20.0),
    # https://github.com/bitsandbytes-foundation/bitsandbytes/issues/441
    ("The GPU only uses 10%, and the inference operation feels that the CPU is running.", 10.0),
])
def test_a_figure_said_of_the_gpu_itself_is_its_utilisation(text: str, value: float) -> None:
    assert facts(text).get("gpu.job_util_percent") == value, facts(text)


@pytest.mark.parametrize("text", [
    "The GPU is 30% faster than the CPU for this model.",  # composed: a speed-up, no utilisation
    "The GPU memory is at 90% during training.",  # composed: another quantity of the GPU
    "The GPU fan is at 40% while training.",  # composed: the fan's duty cycle
    "The GPU only uses 10% of its memory.",  # composed: a share of memory
    "The GPU is not at 30% anymore.",  # composed: denied
    # https://github.com/feinanshan/TDNet/issues/26 (the title): asked
    "Will GPU always run at 100% while training?",
])
def test_a_figure_of_something_else_or_denied_is_no_gpu_util(text: str) -> None:
    assert "gpu.job_util_percent" not in facts(text), facts(text)


# ---- the GPU said not run to full or barely working (stated.yaml gpu-said-not-run-full) ----

@pytest.mark.parametrize("text", [
    # https://github.com/T8mars/comfyui-minimax-h3-prompt-enhancer-T8/issues/12 (the title, its tag dropped: a line
    # that opens with a bracket is program output to the stated reader)
    "[Bug] GPU和CPU都跑不满，最后生成失败",
    # https://github.com/YaoFANGUK/video-subtitle-remover/issues/42 (the title)
    "GPU 使用率没跑满",
])
def test_the_gpu_said_not_run_full_is_matched_by_the_term(text: str) -> None:
    assert _term("gpu-said-not-run-full").regex.search(text) is not None


@pytest.mark.parametrize("text", [
    "训练的时候发现GPU几乎不工作，CPU却一直是满的。",  # composed: the GPU barely works
    "我们在多卡训练时发现GPU并不能跑满，速度很慢。",  # composed: cannot be run full
    "The GPU is barely used while the CPU sits at 100%.",  # composed
])
def test_the_gpu_said_not_run_full_is_the_symptom(text: str) -> None:
    assert "gpu-underutilized" in (facts(text).get("evidence.symptoms") or []), facts(text)  # type: ignore[operator]


@pytest.mark.parametrize("text", [
    # https://github.com/Morizeyao/GPT2-Chinese/issues/126 (the question, and the maintainer's answer)
    "网上查跟data_loader和num_workers有关，找不到相关的code，求问怎么把gpu跑满？",
    "单进程的DataParallel是不可能把GPU跑满的，可以使用多进程分布式训练，速度可以翻几倍",
    "GPU显存没有用满，但是速度很慢。",  # composed: the GPU's memory, not its work
    "The GPU is not working at all after the driver update.",  # composed: a GPU that fails, not one that waits
])
def test_a_wish_a_rule_or_memory_not_full_is_no_idle_gpu(text: str) -> None:
    assert "gpu-underutilized" not in (facts(text).get("evidence.symptoms") or []), facts(text)  # type: ignore[operator]


# ---- the GPU said to idle between the loop's steps (stated.yaml gpu-idle-between-steps) ----

@pytest.mark.parametrize("text", [
    # https://github.com/thtrieu/darkflow/issues/471 (the title)
    "Bottleneck: GPU is mostly idling, then suddenly spikes. Superslow training",
    "The GPU sits idle between batches while the loader catches up.",  # composed
])
def test_a_gpu_idle_between_steps_swings(text: str) -> None:
    read = facts(text)
    assert read.get("gpu.util_swings") is True, read


@pytest.mark.parametrize("text", [
    "The GPU idles between epochs while the validation loop runs.",  # composed: between epochs
    "There is no GPU idle time between iterations anymore.",  # composed: denied
])
def test_a_gpu_idle_between_epochs_or_denied_is_no_swing(text: str) -> None:
    assert "gpu.util_swings" not in facts(text), facts(text)


# ---- an input step named as the bottleneck (stated.yaml input-step-said-bottleneck) ----

@pytest.mark.parametrize("text", [
    # https://github.com/thtrieu/darkflow/issues/471
    "Its almost like the GPU is doing everything correct, but there is a pre-processing bottleneck somewhere.",
    "After profiling, the bottleneck is in cv2.imread for the large images.",  # composed
])
def test_an_input_step_named_as_the_bottleneck_is_the_input_said_slow(text: str) -> None:
    assert facts(text).get("train.input_said_slow") is True, facts(text)


@pytest.mark.parametrize("text", [
    "The bottleneck is in the attention layers, not in the model's input.",  # composed: the model's own layers
    "The bottleneck is not in resize.",  # composed: denied
    "Is the bottleneck in data loading?",  # composed: asked
])
def test_a_bottleneck_elsewhere_or_denied_is_no_slow_input(text: str) -> None:
    assert "train.input_said_slow" not in facts(text), facts(text)


# ---- c10d's store receive timing out: "Socket Timeout" (collectors/parsers/gpu/nccl.py _store_timeout) ----

YOLOV6_404 = """Traceback (most recent call last):
  File "tools/train.py", line 115, in <module>
    main(args)
  File "/home/user/Documents/Daniel/YOLOv6/yolov6/data/data_load.py", line 40, in create_dataloader
    with torch_distributed_zero_first(rank):
  File "/home/user/Documents/Daniel/YOLOv6/yolov6/utils/torch_utils.py", line 25, in torch_distributed_zero_first
    dist.barrier(device_ids=[local_rank])
  File "/home/user/Documents/yv6/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 2420, in barrier
    work = default_pg.barrier(opts=opts)
RuntimeError: Socket Timeout
"""  # noqa: E501  https://github.com/meituan/YOLOv6/issues/404 (frames cut between the first and the loader's)

AXOLOTL_809 = (  # https://github.com/axolotl-ai-cloud/axolotl/issues/809 (one rank's line of the interleaved log)
    "RuntimeError: [2] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store "
    "by key '0', but store->get('0') got error: Socket Timeout\n"
    "Exception raised from recvBytes at /opt/conda/conda-bld/pytorch_1691816824431/work/torch/csrc/distributed/c10d/"
    "Utils.hpp:604 (most recent call first):\n")


@pytest.mark.parametrize("text", [YOLOV6_404, AXOLOTL_809])
def test_the_stores_socket_timeout_is_a_rendezvous_timeout(text: str) -> None:
    assert "timeout" in (pasted(text).get("nccl.errors") or []), pasted(text)  # type: ignore[operator]


@pytest.mark.parametrize("text", [
    # composed: a terminal's own reconnect message, no store and no torch.distributed
    "et: Socket Timeout while waiting for the server, reconnecting\n",
    # composed: an application's traceback that raises the same words outside torch.distributed
    'Traceback (most recent call last):\n  File "/app/client.py", line 12, in fetch\n    raise RuntimeError('
    '"Socket Timeout")\nRuntimeError: Socket Timeout\n',
])
def test_socket_timeout_outside_the_store_is_no_rendezvous_error(text: str) -> None:
    assert "timeout" not in (pasted(text).get("nccl.errors") or []), pasted(text)  # type: ignore[operator]


# ---- Envoy's RBAC filter denying a request or connection (signals.yaml envoy-rbac-denied) ----

@pytest.mark.parametrize("text", [
    # https://github.com/openservicemesh/osm/issues/5042 (the title)
    "rbac_access_denied_matched_policy[none] by using AuthenticatedPrincipal",
    # composed: an Istio sidecar's access-log line, a DENY policy's id in the brackets
    '[2024-03-01T10:00:00.000Z] "- - -" 0 - rbac_access_denied_matched_policy[ns[ml]-policy[deny-all]-rule[0]] '
    '"-" 0 0 0 - "-" "-" "-" "-" "-" inbound|23456|| - 10.0.0.5:23456 10.0.0.7:41230 - -',
])
def test_an_envoy_rbac_denial_is_the_mesh_denying_traffic(text: str) -> None:
    assert facts(text).get("mesh.rbac_denied") is True, facts(text)


@pytest.mark.parametrize("text", [
    "kubectl logs trainer-0 -c istio-proxy | grep rbac_access_denied",  # composed: a search, no denial
    'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods"',  # Kubernetes RBAC
])
def test_a_search_or_kubernetes_rbac_is_no_mesh_denial(text: str) -> None:
    assert "mesh.rbac_denied" not in facts(text), facts(text)


# ---- a rank said to leave out the collective the others call (stated.yaml rank-said-skips-collective) ----

@pytest.mark.parametrize("text", [
    "Rank 0 never calls barrier() because it returns early after saving.",  # composed
    "In my test one process skips the all_reduce on the last batch and the others wait.",  # composed
])
def test_a_rank_said_to_skip_a_collective_is_a_mismatch(text: str) -> None:
    assert facts(text).get("nccl.collectives_differ") is True, facts(text)


@pytest.mark.parametrize("text", [
    # https://github.com/glotzerlab/hoomd-blue/issues/54: a rank that hangs before the call, a straggler
    "As Simon reported, a hanging rank that doesn't call init.* can cause the whole job to block, with the "
    "--nrank=x option.",
    "No rank skips the allreduce, they all reach it.",  # composed: denied
    "One worker is slow and reaches the all_reduce late.",  # composed: late, not left out
])
def test_a_late_or_denied_rank_is_no_mismatch(text: str) -> None:
    assert "nccl.collectives_differ" not in facts(text), facts(text)
