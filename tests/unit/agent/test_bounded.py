"""Answers stay under their byte budget and say where they were cut."""

from __future__ import annotations

import json

import pytest

from collectors.agent.bounded import bounded_json, truncate_text
from collectors.agent.errors import AgentError


def test_text_that_fits_is_untouched() -> None:
    assert truncate_text("a\nb\n", 256) == ("a\nb\n", False)


def test_text_keeps_whole_head_lines_and_ends_with_the_marker() -> None:
    text = "".join(f"line {i:04d} ünïcode\n" for i in range(200))
    out, cut = truncate_text(text, 1000)
    assert cut
    assert len(out.encode("utf-8")) <= 1000
    assert out.endswith("… truncated at 1000 bytes\n")
    body = out.split("\n")[:-2]
    assert body == text.split("\n")[: len(body)]  # whole lines from the top, none cut in half


def test_one_huge_line_gives_only_the_marker() -> None:
    out, cut = truncate_text("x" * 5000, 300)
    assert cut and out == "… truncated at 300 bytes\n"


def test_json_drops_events_to_fit_and_says_how_many() -> None:
    doc = {"available": True, "devices": [{"index": 0}], "xid_events": [{"xid": 79, "pad": "p" * 100}] * 100}
    text = bounded_json(doc, 2000, "xid_events")
    assert len(text.encode("utf-8")) <= 2000
    out = json.loads(text)
    assert out["devices"] == [{"index": 0}]
    assert out["truncated"]["xid_events"] == 100 - len(out["xid_events"])
    assert out["truncated"]["limit_bytes"] == 2000


def test_json_that_fits_has_no_truncation_note() -> None:
    assert "truncated" not in json.loads(bounded_json({"available": False, "xid_events": []}, 4096, "xid_events"))


def test_json_too_big_without_its_events_is_a_400_naming_the_size_needed() -> None:
    doc = {"available": True, "devices": [{"index": i, "pad": "p" * 200} for i in range(8)], "xid_events": [{}]}
    with pytest.raises(AgentError) as caught:
        bounded_json(doc, 1000, "xid_events")
    assert caught.value.status == 400
    assert caught.value.message == "max_bytes=1000 is too small for this answer"
    needed = int(caught.value.expected.rsplit(" ", 1)[1])
    assert len(bounded_json(doc, needed, "xid_events").encode("utf-8")) <= needed
