"""Real pasted NCCL / PyTorch output, copied from public threads (whole lines, each with its URL), read into the
facts the catalog (collectors/catalogs/nccl.yaml) promises: return codes, PyTorch's NCCL errors, and rank lines
behind launcher prefixes."""
# ruff: noqa: E501  (pasted lines are kept whole, as printed)

from __future__ import annotations

from typing import Any

import pytest

from collectors.parsers.gpu import nccl_ranks
from tests.unit.parsers.test_nccl_catalog import read

CASES = [
    # https://github.com/NVIDIA/nccl/issues/451 (description): ncclIbInit refused the HCA inside a container
    ("ib-unable-to-open-device", """\
NCCL INFO NCCL_IB_DISABLE set by environment to 0.
misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed
transport/net_ib.cc:148 NCCL WARN NET/IB : Unable to open device mlx5_bond_0
NCCL INFO NET/IB : No device found.
NCCL INFO NET/Socket : Using [0]bond0:200.1.93.2<0>
NCCL INFO Using network Socket
""", {"nccl.ib_errors": ["ibv-open-device-failed"], "nccl.ib_device_missing": True, "nccl.transports": ["Socket"]}),
    # https://github.com/NVIDIA/nccl/issues/293
    ("bind-failed-trace", """\
42692884fcba:140:140 [0] include/socket.h:333 NCCL WARN Call to bind failed : Address already in use
42692884fcba:140:140 [0] NCCL INFO bootstrap.cc:91 -> 2
42692884fcba:140:140 [0] NCCL INFO bootstrap.cc:245 -> 2
42692884fcba:140:140 [0] NCCL INFO bootstrap.cc:266 -> 2
""", {"nccl.result_codes": ["system-error"]}),
    # https://github.com/pytorch/pytorch/issues/40273
    ("topo-trace-async-thread", """\
XXX:430:2237 [0] include/topo.h:27 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:02/../../0000:02:00.0
XXX:430:2237 [0] NCCL INFO init.cu:864 -> 2
XXX:430:2237 [0] NCCL INFO init.cu:887 -> 2
XXX:430:2237 [0] NCCL INFO init.cu:911 -> 2
XXX:430:2237 [0] NCCL INFO misc/group.cu:69 -> 2 [Async thread]
""", {"nccl.result_codes": ["system-error"]}),
    # https://github.com/rstrudel/segmenter/issues/60 (PyTorch 1.x wording and its 1.x detail line)
    ("torch-1x-unhandled-system-error", """\
RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8
ncclSystemError: System call (socket, malloc, munmap, etc) failed.
""", {"nccl.result_codes": ["system-error"], "nccl.version": "2.7.8"}),
    # https://github.com/pytorch/pytorch/issues/20313 (PyTorch 1.1: no version after the text)
    ("torch-1-1-no-version", "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1556653114079/work/torch/lib/"
     "c10d/ProcessGroupNCCL.cpp:272, unhandled system error\n", {"nccl.result_codes": ["system-error"]}),
    # https://github.com/amdegroot/ssd.pytorch/issues/577 (torch.cuda.nccl's wording, from the title)
    ("torch-cuda-nccl-error-2", "RuntimeError: NCCL Error 2: unhandled system error\n",
     {"nccl.result_codes": ["system-error"]}),
    # https://github.com/NVIDIA/nccl/issues/1514 (Lightning's trainer.fit; torch 2.0's DistBackendError)
    ("lightning-dist-backend-internal-error", """\
torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, internal error, NCCL version 2.14.3
ncclInternalError: Internal check failed.
Last error:
Net : Connection closed by remote peer user<50260>
""", {"nccl.result_codes": ["internal-error"]}),
    # https://github.com/NVIDIA/nccl/issues/795 (a peer gone: NCCL's own trace carries ncclRemoteError, 6)
    ("remote-error-trace", """\
a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe
a100-st-p4d24xlarge-22:183006:183220 [1] NCCL INFO misc/socket.cc:535 -> 6
a100-st-p4d24xlarge-22:183006:183220 [1] NCCL INFO transport/net_socket.cc:368 -> 6
a100-st-p4d24xlarge-22:183006:183220 [1] NCCL INFO include/net.h:26 -> 6
""", {"nccl.result_codes": ["remote-error"], "nccl.errors": ["connection-reset"]}),
    # https://github.com/NVIDIA/nccl-tests/issues/166
    ("socket-progress-then-internal", """\
gpu004:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer gpu004.ds-a4-r02.abc.com<55693>
gpu004:2200689:2200706 [3] NCCL INFO misc/socket.cc:749 -> 6
gpu004:2200689:2200706 [3] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x7f4774cc9620
gpu004:2200689:2200706 [3] NCCL INFO transport/net.cc:288 -> 3
gpu004:2200689:2200706 [3] NCCL INFO group.cc:65 -> 3 [Async thread]
""", {"nccl.result_codes": ["remote-error", "internal-error"], "nccl.errors": ["connection-reset"]}),
    # https://github.com/NVIDIA/nccl/issues/1235 (NCCL's own allocation failing: ncclUnhandledCudaError, 1)
    ("cuda-oom-trace", """\
ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'
ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes
ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:204 -> 1
ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:605 -> 1
""", {"nccl.result_codes": ["unhandled-cuda-error"], "cuda.oom": True}),
    # https://github.com/pytorch/pytorch/issues/67581 (torchrun's error handler, PyTorch 1.10: the agent could not
    # reach the C10d store on --rdzv_endpoint)
    ("elastic-error-handler-c10d-store", """\
ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{
  "message": {
    "message": "RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.",
""", {"nccl.errors": ["store-unreachable"]}),
    # https://github.com/meta-pytorch/torchtune/issues/2450 (the traceback's last lines, PyTorch 2.x)
    ("elastic-traceback-c10d-store", """\
  File "/root/miniconda3/envs/torchtune/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 183, in _create_tcp_store
    raise RendezvousConnectionError(
torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.
""", {"nccl.errors": ["store-unreachable"]}),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_real_pastes(text: str, expected: dict[str, Any]) -> None:
    found = read(text)
    for name, value in expected.items():
        assert name in found, (name, found)
        if isinstance(value, list):
            assert sorted(found[name]) == sorted(value), name
        else:
            assert found[name] == value, name


# https://github.com/NVIDIA-NeMo/RL/issues/2140: Ray's `(Worker[rank=31] pid=…, ip=…)` before torchrun's `[rank31]:`.
RAY = ("(MegatronPolicyWorker[rank=31] pid=3264030, ip=10.1.101.236) [rank31]:[E323 05:14:22.517801495 "
       "ProcessGroupNCCL.cpp:1858] [PG ID 0 PG GUID 0(default_pg) Rank 31] Received a dump signal due to a collective "
       "timeout from  rank 107 and we will try our best to dump the debug info. Last enqueued NCCL work: 51, last "
       "completed NCCL work: 51.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used "
       "across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, "
       "didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs "
       "in the communications library (e.g. NCCL), etc. ")
# https://github.com/hiyouga/LlamaFactory/issues/8261: a line number in front of `[rank1]:`.
NUMBERED = ("[1803] [rank1]:[E602 11:17:52.557891708 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
            "Received a dump signal due to a collective timeout from this local rank and we will try our best to dump "
            "the debug info. Last enqueued NCCL work: 6, last completed NCCL work: 6.This is most likely caused by "
            "incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not "
            "same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be "
            "caused by GIL deadlock or other reasons such as network errors or bugs in the communications library "
            "(e.g. NCCL), etc. ")
# https://github.com/sgl-project/sglang/issues/10216: -1 for a group with nothing enqueued yet.
NOTHING_YET = ("[rank6]:[E909 08:45:31.970959174 ProcessGroupNCCL.cpp:1870] [PG ID 0 PG GUID 0 Rank 6] Received a dump "
               "signal due to a collective timeout from this local rank and we will try our best to dump the debug "
               "info. Last enqueued NCCL work: -1, last completed NCCL work: -1.This is most likely caused by "
               "incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not "
               "same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can "
               "be caused by GIL deadlock or other reasons such as network errors or bugs in the communications "
               "library (e.g. NCCL), etc. ")


@pytest.mark.parametrize(("line", "rank", "global_rank", "enqueued", "completed"), [
    (RAY, 31, 31, 51, 51),
    (NUMBERED, 1, 1, 6, 6),
    (NOTHING_YET, 6, 6, -1, -1),
], ids=["ray-prefix", "line-number-prefix", "minus-one"])
def test_prefixed_rank_lines(line: str, rank: int, global_rank: int, enqueued: int, completed: int) -> None:
    row = nccl_ranks.read_table([line]).rows[("0", rank)]
    assert (row.global_rank, row.enqueued, row.completed) == (global_rank, enqueued, completed)


def test_an_app_logging_its_own_etcd_connection_is_no_rendezvous_store() -> None:
    # Another program's retry log (an etcd3 client's wording): not torchrun's RendezvousConnectionError.
    got = read("ERROR:root:The connection to etcd has failed. Exception: ConnectionFailedError\n")
    assert "store-unreachable" not in (got.get("nccl.errors") or [])
