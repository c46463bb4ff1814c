"""What model servers print and people paste about them (issue 24): vLLM's scheduler cap on a command line, and a
response's status line behind a test log's decoration. Verbatim lines from the threads named beside each."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts


@pytest.mark.parametrize(("text", "expected"), [
    # https://github.com/vllm-project/vllm/issues/8847 (description): the server's command, quoted inline
    ("`python3 -m vllm.entrypoints.openai.api_server --model meta-llama/Meta-Llama-3-8B-Instruct --enforce-eager "
     "--max-num-seqs 16`", 16),
    # https://github.com/vllm-project/vllm/issues/4145 (description's fenced command), one line of it
    ("--max-num-seqs 1 \\", 1),
])
def test_vllms_max_num_seqs_is_read_from_its_command(text: str, expected: int) -> None:
    assert joined_facts(text).get("serving.max_num_seqs") == expected


def test_a_placeholder_for_max_num_seqs_is_no_figure() -> None:
    # https://github.com/vllm-project/vllm/issues/17598 (description): a command with the value left as a placeholder
    line = ("python -m vllm.entrypoints.openai.api_server --model [model_name] --disable-log-requests "
            "--num-scheduler-steps 10 --max_model_len 4096 --max-num-seqs [max_num_seqs]")
    assert "serving.max_num_seqs" not in joined_facts(line)


def test_a_response_status_line_behind_gos_test_decoration_is_a_5xx() -> None:
    # The layout of Go's testing package (file.go:line: before each t.Log line), as knative's e2e tests dump the
    # response they got; rendered, not pasted (the real paste is a tests/realworld case).
    got = joined_facts("    request.go:112: HTTP/1.1 502 Bad Gateway\n")
    assert got.get("http.error_statuses") == [502]
    assert got.get("evidence.symptoms") == ["error-rate"]


def test_a_2xx_status_line_and_a_question_name_no_error() -> None:
    assert "http.error_statuses" not in joined_facts("    request.go:112: HTTP/1.1 200 OK\n")
    got = joined_facts("Why would the server return a 5xx error rate this high?\n")
    assert "evidence.symptoms" not in got


def test_an_unhandled_exception_in_an_asgi_app_is_a_failed_request() -> None:
    # https://github.com/vllm-project/vllm/issues/5881 (description): uvicorn's line before the traceback
    got = joined_facts("ERROR:    Exception in ASGI application\n")
    assert (got.get("http.failure_kinds"), got.get("evidence.symptoms")) == (["app-error"], ["error-rate"])


@pytest.mark.parametrize("sentence", [
    "p99 latency never went up during the test.",
    "The latency of the requests has not increased.",
    "requests are not waiting in the queue",
    "the generation speed is not slow at all",
    "5xx error rate never went up after the fix",
    "Our p99 latency is 80ms which is fine.",
    "requests take 200ms on average",
    "Does TTFT of 3s mean the queue is full?",
    "The image pull takes 30s on every node.",
])
def test_a_denied_healthy_or_asked_model_server_figure_names_no_symptom(sentence: str) -> None:
    # Written to the catalog's entries (latency-up, requests-queued, generation-slow, error-rate-up,
    # latency-figure): a negation among the words a pattern lets in, a figure under the 500 ms line, a question,
    # and a duration that is no request's.
    got = joined_facts(sentence + "\n")
    assert "evidence.symptoms" not in got and "serving.requests_queued" not in got


@pytest.mark.parametrize(("sentence", "symptom"), [
    ("Model serving API suddenly experiencing p99 latency of 800ms, the SLA is 100ms.", "latency"),
    ("The endpoints take 10s-20s to respond instead of less than 500ms.", "latency"),
    ("the latency of each request is gradually increases, which seems abnormal", "latency"),
    ("We have a high error rate on the ingress.", "error-rate"),
])
def test_a_model_server_symptom_said_in_words_is_read(sentence: str, symptom: str) -> None:
    assert joined_facts(sentence + "\n").get("evidence.symptoms") == [symptom]
