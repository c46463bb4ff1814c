"""Every message of the NCCL / PyTorch catalog (collectors/catalogs/nccl.yaml), rendered with its sample values as
the program prints it and pasted, is read into the facts the catalog lists; every result code is read in each of
the three forms it is printed in."""

from __future__ import annotations

from typing import Any

import pytest

from collectors.catalogs.nccl_catalog import Message, ResultCode, catalog
from collectors.parsers.gpu.nccl import claims_line
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text

MESSAGES = catalog().messages
CODES = catalog().result_codes


def read(text: str) -> dict[str, Any]:
    """Facts read from a paste, list facts merged."""
    out: dict[str, Any] = {}
    for artifact in artifacts_from_text(text, "catalog", source="paste"):
        for fact in parse_artifact(artifact).facts:
            if isinstance(fact.value, list):
                out.setdefault(fact.name, [])
                out[fact.name] += [v for v in fact.value if v not in out[fact.name]]
            else:
                out.setdefault(fact.name, fact.value)
    return out


@pytest.mark.parametrize("message", MESSAGES, ids=[m.id for m in MESSAGES])
def test_every_message_is_read(message: Message) -> None:
    found = read(message.render() + "\n")
    for name, expected in message.facts.items():
        assert name in found, (message.id, name, found)
        if isinstance(expected, list):
            assert set(expected) <= set(found[name]), (message.id, name, found[name])
        else:
            assert found[name] == expected, (message.id, name, found[name])


@pytest.mark.parametrize("message", MESSAGES, ids=[m.id for m in MESSAGES])
def test_every_message_is_claimed_as_nccl_output(message: Message) -> None:
    assert any(claims_line(line) for line in message.render().split("\n")), message.id


@pytest.mark.parametrize("message", MESSAGES, ids=[m.id for m in MESSAGES])
def test_every_message_names_its_source(message: Message) -> None:
    assert "/" in message.project and message.file and message.versions
    assert "{" not in message.render(), "a placeholder has no sample value"


# The three ways a result code reaches a log: NCCL's own trace as the failure climbs the stack, PyTorch's
# C10D_NCCL_CHECK message with ncclGetErrorString's text, and PyTorch's detail line that starts with the enum name.
FORMS = {
    "nccl-trace": "gpu-node-3:1123:1201 [5] NCCL INFO init.cc:1621 -> {code}",
    "torch-nccl-error-in": "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:121, {text}, "
                           "NCCL version 2.18.1",
    "torch-detail": "{enum}: a sentence PyTorch adds.",
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("code", CODES, ids=[c.value for c in CODES])
def test_every_result_code_in_every_form(code: ResultCode, form: str) -> None:
    if form == "torch-nccl-error-in" and " " not in code.text:
        pytest.skip("a one-word text (timeout) is not read as NCCL's: its number and name are")
    text = FORMS[form].format(code=code.code, text=code.text, enum=code.enum)
    assert read(text + "\n").get("nccl.result_codes") == [code.value]


def test_a_return_code_outside_the_table_is_not_read() -> None:
    assert "nccl.result_codes" not in read("gpu-node-3:1123:1201 [5] NCCL INFO init.cc:1621 -> 0\n")
    assert "nccl.result_codes" not in read("gpu-node-3:1123:1201 [5] NCCL INFO init.cc:1621 -> 42\n")


def test_trace_lines_with_their_header_cut_off_are_still_read() -> None:
    # A paste of only the trace, after whatever printed the `host:pid:tid [dev] NCCL INFO` header was cut away.
    assert read("init.cc:1621 -> 2\ninit.cc:1684 (ncclCommInitRankDev) -> 2\n").get("nccl.result_codes") == [
        "system-error"]


def test_c10d_check_prefix_says_a_call_failed_whatever_its_text() -> None:
    # C10D_NCCL_CHECK prints "NCCL error in: <file>:<line>, <text>" only for a result other than ncclSuccess: a text
    # that is none of ncclGetErrorString's (retyped, cut by the terminal, or one-word) still shows a failed call.
    wrapped = "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:290, unhandled sys\n"
    assert read(wrapped).get("nccl.result_codes") == ["unknown"]
    one_word = "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:121, timeout\n"
    assert read(one_word).get("nccl.result_codes") == ["unknown"]
    # A known text keeps its code, with no `unknown` beside it (FewX#74's title:
    # https://github.com/fanq15/FewX/issues/74).
    known = ("RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:32, unhandled cuda error, NCCL "
             "version 2.4.8\n")
    assert read(known).get("nccl.result_codes") == ["unhandled-cuda-error"]


def test_the_c10d_check_format_string_itself_is_no_failure() -> None:
    # The macro's source as people paste it when they read it (torch/lib/c10d/NCCLUtils.hpp, 1.x): no file and
    # line were filled in.
    source = '      fprintf(stderr, "NCCL error in: %s:%d, %s\\n", __FILE__, __LINE__, \\\n'
    assert "nccl.result_codes" not in read(source)
    assert "nccl.result_codes" not in read('std::string err = "NCCL error in: " + std::string(__FILE__) + ":" +\n')
