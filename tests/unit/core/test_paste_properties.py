"""Property tests for reading pastes: any input is read without raising, line numbers survive unwrapping, and
every citation points into the paste. Long lines and deep nesting are generated on purpose."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors.parsers.registry import parse_artifact
from collectors.paste import PasteError, artifacts_from_text
from collectors.text import normalise
from collectors.unwrap import unwrap, unwrap_lines
from tests.unit.parsers.test_parser_contract import FRAGMENTS

WRAPPERS = ["```", "```diff", "> ", "$ kubectl get pods", "root@node:~# dmesg -T", "[1,0]<stdout>:", "[rank3]:",
            "[trainer0|0]:", "**", "  <-- look here", "\x1b[1;31m", "\r", "`", "<details>", "+ ", "- "]
line = st.one_of(st.sampled_from(FRAGMENTS), st.sampled_from(WRAPPERS), st.text(max_size=30))
long_line = st.tuples(st.sampled_from(FRAGMENTS + WRAPPERS + ["a", " ", "{", "[", "\\"]),
                      st.integers(min_value=50, max_value=3000)).map(lambda t: t[0] * t[1])
nested = st.tuples(st.sampled_from(["[", "{\"a\":", "(", "- ", "  "]), st.integers(min_value=100, max_value=3000)).map(
    lambda t: t[0] * t[1] + ("]" * t[1] if t[0] == "[" else ""))
paste = st.lists(st.one_of(line, line.map(lambda s: s + "  <-- note"), long_line, nested), min_size=1,
                 max_size=30).map(lambda parts: "\n".join(parts))

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                            HealthCheck.data_too_large])


@SETTINGS
@given(text=paste)
def test_any_paste_is_read_without_raising_and_citations_point_into_it(text: str) -> None:
    if not unwrap(text).text.strip():
        with pytest.raises(PasteError):
            artifacts_from_text(text, "p")
        return
    artifacts = artifacts_from_text(text, "p")
    assert artifacts
    lines = unwrap(text).lines
    count = len(lines)
    for artifact in artifacts:
        # Every artifact is a span of the paste's lines (others blanked) starting at first_line: its numbering.
        span = lines[artifact.first_line - 1:artifact.first_line - 1 + len(artifact.content.split("\n"))]
        assert [c if c in ("", s) else None for c, s in zip(artifact.content.split("\n"), span, strict=True)] \
            == artifact.content.split("\n")
        result = parse_artifact(artifact)
        assert not [p for p in result.problems if "internal" in p or "failed:" in p], result.problems
        for fact in result.facts:
            assert 0 <= fact.citation.start <= fact.citation.end <= count, fact


@SETTINGS
@given(text=st.lists(st.one_of(line, long_line), max_size=40).map("\n".join))
def test_unwrapping_keeps_one_line_for_one_line(text: str) -> None:
    clean = unwrap(text)
    expected = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
    assert len(clean.lines) == len(clean.commands) == expected


@SETTINGS
@given(text=st.lists(st.one_of(line, long_line, st.text(max_size=40)), max_size=40).map("\n".join))
def test_the_whole_paste_shortcut_reads_like_the_line_by_line_path(text: str) -> None:
    # unwrap() skips the per-line loop when no line can wear a wrapper; both must agree on every paste.
    fast, slow = unwrap(text), unwrap_lines(normalise(text).split("\n"))
    assert (fast.lines, fast.commands) == (slow.lines, slow.commands)


def test_unwrapping_takes_off_what_people_paste_around_evidence() -> None:
    # Shapes from the real-world corpus (tests/realworld), one per wrapper.
    text = "\n".join([
        "```shell", "$ kubectl get pods", "[trainer0|0]:ncclInternalError: Internal check failed.",
        "> The node was low on resource: memory.", "[1,0]<stdout>:NCCL INFO Bootstrap : Using eth0",
        "  nvidia.com/gpu:     7   <-- one is gone", "**Back-off restarting failed container**",
        "\x1b[31mError: ErrImagePull\x1b[0m\r", "```",
    ])
    clean = unwrap(text)
    assert clean.lines == ["", "$ kubectl get pods", "ncclInternalError: Internal check failed.",
                           "The node was low on resource: memory.", "NCCL INFO Bootstrap : Using eth0",
                           "  nvidia.com/gpu:     7", "Back-off restarting failed container", "Error: ErrImagePull",
                           ""]
    assert clean.commands[3] == "kubectl get pods" and clean.commands[-1] == ""


def test_an_arrow_in_a_programs_own_log_is_no_typed_note() -> None:
    # https://github.com/kubernetes-sigs/kind/issues/2848: stress's own "<-- worker N got signal 9" under
    # `kubectl logs`; the same arrow after a value in `kubectl describe` output is a person's note.
    text = "\n".join([
        "$ kubectl logs memory-demo-2 -n mem-example",
        "stress: FAIL: [1] (415) <-- worker 7 got signal 9",
        "$ kubectl describe node gpu-1",
        "  nvidia.com/gpu:     7   <-- one is gone",
    ])
    assert unwrap(text).lines[1:] == ["stress: FAIL: [1] (415) <-- worker 7 got signal 9",
                                      "$ kubectl describe node gpu-1", "  nvidia.com/gpu:     7"]


def test_the_lines_a_fence_held_are_kept_as_spans_counted_in_each_piece() -> None:
    # Rule test (made-up paste): two fenced blocks, an empty one, and a fence left open at the end.
    clean = unwrap("said\n```\nshown 1\nshown 2\n```\nsaid\n~~~\n~~~\n```text\nshown 3\n```\nsaid\n```\ncut off")
    assert clean.fenced == [(3, 4), (10, 10)]
    texts = list(artifacts_from_text("I ran it and got this:\n\n```\nthe pod keeps restarting\n```\n", "p"))
    assert [a.fenced for a in texts] == [((4, 4),)]


@SETTINGS
@given(text=st.lists(st.one_of(line, st.sampled_from(["```", "~~~", "```log"])), max_size=40).map("\n".join))
def test_fenced_spans_lie_inside_the_paste_and_inside_each_piece(text: str) -> None:
    clean = unwrap(text)
    assert all(1 <= a <= b <= len(clean.lines) for a, b in clean.fenced)
    try:
        artifacts = artifacts_from_text(text, "p")
    except PasteError:
        return  # empty, or only fences
    for artifact in artifacts:
        count = artifact.content.count("\n") + 1
        assert all(1 <= a <= b <= count for a, b in artifact.fenced)
