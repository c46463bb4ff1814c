"""NCCL lines behind Ray's worker prefixes ("(pid=N) ", "(RayTrainWorker pid=N, ip=...) ", with or without the
colour codes) are read as NCCL, and a healthy Ray-prefixed NCCL start names no hang."""

from __future__ import annotations

from collectors.paste import artifacts_from_text
from playbooks.pipeline import triggered_by
from tests.unit.parsers.paste_facts import first_facts as read

# https://github.com/ray-project/ray/issues/16979 (comment, verbatim lines): RaySGD workers' NCCL start.
RAY_16979 = """\
(pid=37105) dev-duanjiangfei-ap0:37105:37105 [0] NCCL INFO Bootstrap : Using [0]eth0:10.148.18.24<0>
"""

# https://github.com/ray-project/ray/issues/40850 (issue description, verbatim lines): Ray Train workers' NCCL.
RAY_40850 = "\n".join([
    "(RayTrainWorker pid=83498) localhost:83498:84555 [0] NCCL INFO Channel 00/04 :    0   1   2   3   4",
    "(RayTrainWorker pid=83498) localhost:83498:86100 [0] NCCL INFO Allocated 4194656 bytes of shared memory in "
    "/dev/shm/nccl-Ss37Jo",
]) + "\n"


def test_ray_pid_prefix_is_read_as_nccl() -> None:
    assert read(RAY_16979)["nccl.interfaces"] == ["eth0"]


def test_ray_train_worker_prefix_with_and_without_escape_bytes_reads_an_nccl_error() -> None:
    # Ray colours the prefix; a paste keeps the ESC byte or loses it and leaves "[36m".
    tail = " node-1:12345:12400 [0] misc/socket.cc:484 NCCL WARN Net : Connect to 10.0.0.6<40123> failed : " \
           "Connection refused\n"
    for prefix in ("(RayTrainWorker pid=12345, ip=10.0.0.5)", "\x1b[36m(RayTrainWorker pid=12345)\x1b[0m",
                   "[36m(RayTrainWorker pid=12345)[0m"):
        assert read(prefix + tail)["nccl.errors"] == ["connection-refused"], prefix


def test_a_healthy_ray_prefixed_nccl_start_names_no_hang() -> None:
    facts = read(RAY_16979 + RAY_40850)
    assert "nccl.errors" not in facts and "nccl.result_codes" not in facts
    chosen = [p.spec.id for p in triggered_by(artifacts_from_text(RAY_16979 + RAY_40850, "paste"))]
    assert "nccl-hang" not in chosen
