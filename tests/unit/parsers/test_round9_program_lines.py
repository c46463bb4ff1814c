"""Round 9 (issue #24, batches y and z): lines programs print, read from real pastes (first_sight_pastes.yaml, each
with its thread), from their upstream templates rendered with sample values, and refused where they mean nothing."""

from __future__ import annotations

from string import Template

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.gpu import nvidia_smi_query
from collectors.parsers.kubernetes.messages.k8s_messages import volume_errors
from collectors.parsers.logs import curl_response
from collectors.parsers.text import tls_pull
from collectors.yaml_safe import load_file
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES, first_facts, joined_facts


def _text(content: str) -> Artifact:
    return Artifact(id="p", kind=ArtifactKind.TEXT, content=content)


def _symptoms(text: str) -> list[object]:
    value = joined_facts(text).get("evidence.symptoms", [])
    return list(value) if isinstance(value, list) else []


# ---- Envoy's "no healthy upstream" as the body a client printed ------------------------------------------------
@pytest.mark.parametrize("paste", ["akhq-1313-curl-service-no-healthy-upstream",
                                   "otel-demo-1935-curl-no-healthy-upstream-zsh-mark"])
def test_a_client_answered_no_healthy_upstream_by_envoy_is_a_service_not_reached(paste: str) -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES[paste])
    assert facts["http.failure_kinds"] == ["no-upstream"]
    assert set(_symptoms(FIRST_SIGHT_PASTES[paste])) == {"error-rate", "service-unreachable"}


def test_the_body_after_wget_and_after_a_kubectl_exec_is_read_too() -> None:
    for command in ("$ wget -qO- http://checkout.shop.svc:8080/", "# kubectl exec -it client -- curl -s checkout"):
        facts = curl_response.read(_text(f"{command}\nno healthy upstream\n")).facts
        assert [f.value for f in facts] == [["service-unreachable"]]


def test_no_healthy_upstream_without_a_client_or_after_a_healthy_answer_is_no_unreachable_service() -> None:
    # A question about the docs names the phrase but shows no request answered with it.
    question = "Where do the docs explain when Envoy answers no healthy upstream?\n"
    assert curl_response.read(_text(question)).facts == []
    assert "service-unreachable" not in _symptoms(question)
    # A healthy 200 through Envoy: the client printed the backend's body.
    assert curl_response.read(_text("$ curl -s checkout:8080/healthz\nok\n$ echo done\n")).facts == []
    # A resolved alert quoting the phrase shows no client's request at all.
    resolved = "[RESOLVED] EnvoyClusterUnhealthy\nsummary: Envoy answered no healthy upstream for checkout\n"
    assert curl_response.read(_text(resolved)).facts == []
    # The phrase printed by a later command, after the next prompt, is not this client's body.
    assert curl_response.read(_text("$ curl -s checkout:8080/\nok\n$ cat notes.txt\nno healthy upstream\n")).facts == []


def test_envoy_status_and_flag_quoted_in_backticks_is_a_5xx_at_the_proxy() -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES["emissary-4284-prose-503-uh-backticks"])
    assert facts["http.error_statuses"] == [503]
    assert "error-rate" in _symptoms(FIRST_SIGHT_PASTES["emissary-4284-prose-503-uh-backticks"])


# ---- nvidia-smi -q's Utilization block ----------------------------------------------------------------------
def test_a_real_query_fragment_gives_the_gpu_utilisation_and_nothing_of_throttling() -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES["k8s-vgpu-scheduler-25-nvidia-smi-q-utilization"])
    assert facts["gpu.util_percent"] == 0.0
    assert "gpu.throttle_reasons" not in facts


# nvidia-smi -q's per-GPU block (nvidia-smi(1), NVIDIA driver 390-580): keys padded to one column under each header.
_QUERY_BLOCK = Template("""GPU 00000000:${bus}:00.0
    Compute Mode                          : Default
    Utilization
        Gpu                               : ${util} %
        Memory                            : 5 %
        Encoder                           : 0 %
        Decoder                           : 0 %
""")


def test_the_rendered_query_layout_is_read_and_several_gpus_give_the_busiest() -> None:
    two = "".join(_QUERY_BLOCK.substitute(bus=bus, util=util) for bus, util in (("3B", 7), ("5E", 64)))
    facts = nvidia_smi_query.read_utilization(_text(two)).facts
    assert [(f.name, f.value) for f in facts] == [("gpu.util_percent", 64.0)]
    # The full report (its banner makes it the nvidia-smi kind) gives it through the report reader.
    report = "==============NVSMI LOG==============\n\n" + two
    assert first_facts(report)["gpu.util_percent"] == 64.0


def test_the_570_report_spells_gpu_in_capitals() -> None:
    # https://github.com/munin-monitoring/contrib/pull/1485 (description): nvidia-smi -q of driver 570.x, whose
    # Utilization block says "GPU" where earlier drivers said "Gpu" and adds JPEG and OFA
    text = ("    Utilization\n"
            "        GPU                               : 33 %\n"
            "        Memory                            : 3 %\n"
            "        Encoder                           : 0 %\n"
            "        Decoder                           : 0 %\n"
            "        JPEG                              : 0 %\n"
            "        OFA                               : 0 %\n")
    assert [(f.name, f.value) for f in nvidia_smi_query.read_utilization(_text(text)).facts] == [
        ("gpu.util_percent", 33.0)]
    report = "==============NVSMI LOG==============\n\n" + _QUERY_BLOCK.substitute(bus="3B", util=12).replace(
        "Gpu   ", "GPU   ")
    assert first_facts(report)["gpu.util_percent"] == 12.0


def test_na_utilisation_and_a_gpu_key_outside_the_block_give_nothing() -> None:
    na = ("    Utilization\n        Gpu                               : N/A\n"
          "        Memory                            : N/A\n")
    assert nvidia_smi_query.read_utilization(_text(na)).facts == []
    # "Gpu : 3 %" under another header (a process list, an encoder section) is not the GPU's utilisation.
    other = "    Encoder Stats\n        Gpu                               : 3 %\n"
    assert nvidia_smi_query.read_utilization(_text(other)).facts == []


# ---- Lightning's few-workers warning, wrapped before its number --------------------------------------------------
def test_the_wrapped_warning_gives_its_suggested_worker_count() -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES["lightning-7290-few-workers-warning-wrapped"])
    assert facts["train.loader_few_workers"] is True
    assert facts["train.loader_workers_suggested"] == 8


# ---- the kubelet without its own Node object --------------------------------------------------------------------
def test_a_kubelet_that_cannot_find_its_own_node_shows_a_node_not_ready() -> None:
    text = FIRST_SIGHT_PASTES["karpenter-aws-2423-kubelet-own-node-not-found"]
    facts = joined_facts(text)
    assert facts["node.not_ready_reasons"] == ["kubelet-stopped-posting"]
    assert "node-not-ready" in _symptoms(text)
    assert "evicted" not in _symptoms(text)


def test_another_objects_not_found_is_not_the_kubelets_own_node() -> None:
    text = 'E0912 22:47:21.2 1849 pod_workers.go:1] "Error syncing pod" err="pods \\"web-0\\" not found"\n'
    assert "node.not_ready_reasons" not in joined_facts(text)


# ---- image pulls: docker's v1 refusal and Go's bare x509 error ----------------------------------------------------
def test_docker_v1_status_403_is_a_refused_pull() -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES["k8s-30148-docker-v1-status-403"])
    assert facts["image.pull_error"] == "unauthorized"


def test_a_bare_x509_error_in_a_paste_about_pulling_is_the_pulls_tls() -> None:
    facts = tls_pull.read(_text(FIRST_SIGHT_PASTES["harbor-5066-prose-x509-pull"])).facts
    assert [(f.name, f.value) for f in facts] == [("image.pull_error", "tls")]


def test_every_x509_template_is_read_beside_a_pull() -> None:
    raw = load_file(tls_pull._CATALOG)
    for error in raw["errors"]:
        line = Template(error["template"]).substitute(raw["sample"])
        facts = tls_pull.read(_text(f"$ docker pull {raw['sample']['host']}/app:1.0\n{line}\n")).facts
        assert [(f.name, f.value) for f in facts] == [("image.pull_error", "tls")], error["id"]


def test_x509_without_a_pull_or_from_kubectl_or_a_webhook_is_no_pull_error() -> None:
    alone = "x509: certificate signed by unknown authority\n"
    assert tls_pull.read(_text(alone)).facts == []
    kubectl = ("$ docker pull nginx\nok\n$ kubectl get pods\n"
               "Unable to connect to the server: x509: certificate signed by unknown authority\n")
    assert tls_pull.read(_text(kubectl)).facts == []
    webhook = ("pulling the image works, but: Internal error occurred: failed calling webhook \"v.example.com\": "
               "Post \"https://svc.ns.svc:443/validate\": x509: certificate signed by unknown authority\n")
    assert tls_pull.read(_text(webhook)).facts == []


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("x509: pull image curl Utilization Gpu %\n\t\"'`")), max_size=300))
def test_the_new_readers_never_raise_on_garbage(text: str) -> None:
    for read in (tls_pull.read, curl_response.read, nvidia_smi_query.read_utilization):
        read(_text(text))


# ---- Longhorn's attach refusal: the driver's own volume, not one attached elsewhere --------------------------------
def test_longhorns_not_ready_for_workloads_is_its_own_volume_error_kind() -> None:
    # longhorn/longhorn#2886 (the FailedAttachVolume event's message, verbatim)
    real = ('AttachVolume.Attach failed for volume "pvc-65c838c5-0494-4a28-87ad-5d5883f28c4e" : rpc error: '
            "code = Aborted desc = volume pvc-65c838c5-0494-4a28-87ad-5d5883f28c4e in state detached is not ready "
            "for workloads")
    assert volume_errors(real) == ["volume-not-ready", "attach-failed"]
    # longhorn-manager csi/controller_server.go's template, rendered: "volume %s is not ready for workloads"
    rendered = ('AttachVolume.Attach failed for volume "pvc-1" : rpc error: code = Aborted desc = volume pvc-1 is '
                "not ready for workloads")
    assert "volume-not-ready" in volume_errors(rendered)
    # Negative: a multi-attach refusal stays multi-attach and names no driver reason.
    multi = ('Multi-Attach error for volume "pvc-1" Volume is already exclusively attached to one node and '
             "can't be attached to another")
    assert volume_errors(multi) == ["multi-attach"]


# ---- a child process SIGKILLed while its parent lives on: bash's job notice, Airflow's task runner ----------------
def test_bashs_killed_notice_for_a_script_child_is_a_child_sigkilled() -> None:
    # argoproj/argo-workflows#8981, the issue description (verbatim)
    real = ("/argo/staging/script: line 10:    93 Killed                  "
            'pyenv exec python script/execute.py "${args[@]}"\n')
    assert joined_facts(real)["app.child_sigkilled"] is True


@pytest.mark.parametrize("code", ["-9", "Negsignal.SIGKILL"])
def test_airflows_task_exit_by_sigkill_is_a_child_sigkilled(code: str) -> None:
    # apache/airflow local_task_job_runner.py's "Task exited with return code %s", rendered
    line = f"[2023-05-01, 10:00:00 UTC] {{local_task_job_runner.py:225}} INFO - Task exited with return code {code}\n"
    assert joined_facts(line)["app.child_sigkilled"] is True


def test_other_exits_and_killed_in_words_are_not_a_sigkill() -> None:
    assert "app.child_sigkilled" not in joined_facts("INFO - Task exited with return code 1\n")
    assert "app.child_sigkilled" not in joined_facts("The pod was Killed by the user yesterday.\n")
