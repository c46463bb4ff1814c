"""A line that opens with a lower-case error chain is a program's line, shown, not said (stated.py _CHAIN); a
person's capitalised label in front of a sentence stays prose."""

from __future__ import annotations

import pytest

from collectors.parsers.text.stated import _prose


@pytest.mark.parametrize("line", [
    # https://github.com/triton-inference-server/server/issues/5341 (description, the kubectl logs block)
    "error: creating server: Internal - failed to stat file  s3://https://URL/triton-model-repository",
    # triton-inference-server/server src/common.h FAIL_IF_ERR, rendered (composed: the template, not a paste)
    "error: creating server: Invalid argument - --model-repository must be specified",
])
def test_an_error_chain_is_a_programs_line(line: str) -> None:
    assert not _prose(line)


@pytest.mark.parametrize("line", [
    "Error: the pod keeps restarting after the upgrade and we do not know why",
    "error: it is failing again since yesterday",  # one label, then a sentence: no chain
])
def test_a_label_before_a_sentence_stays_prose(line: str) -> None:
    assert _prose(line)
