"""curl -w output read through the template the paste shows (collectors/parsers/logs/curl_writeout.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.logs import curl_writeout

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "curl_writeout"


def lookup(text: str) -> object:
    result = curl_writeout.read(Artifact(id="p", kind=ArtifactKind.TEXT, content=text))
    assert not result.problems
    facts = {f.name: f for f in result.facts}
    return facts["dns.lookup_seconds"].value if "dns.lookup_seconds" in facts else None


def render(template: str, values: dict[str, str]) -> str:
    """The line curl prints for one transfer: every %{variable} replaced (src/tool_writeout.c)."""
    return re.sub(r"%\{(\w+)\}", lambda m: values[m.group(1)], template)


# https://github.com/Azure/AKS/issues/1657 (description): the command, then its output in a loop (cut to lines).
AKS_1657 = (FIXTURES / "aks-1657-time-namelookup-loop.txt").read_text(encoding="utf-8")


def test_bare_numbers_after_a_lookup_only_template_are_lookup_times() -> None:
    assert lookup(AKS_1657) == 2.505759


@pytest.mark.parametrize("template", [
    "DNS: %{time_namelookup} connect: %{time_connect} total: %{time_total}\\n",
    "%{http_code} %{time_namelookup} %{time_connect} %{time_starttransfer} %{time_total}\\n",
    "lookup=%{time_namelookup}\\tstatus=%{http_code}\\n",
])
def test_a_rendered_template_is_read(template: str) -> None:
    values = {"time_namelookup": "5.004512", "time_connect": "5.005001", "time_total": "5.120333",
              "time_starttransfer": "5.119870", "http_code": "200"}
    fast = values | {"time_namelookup": "0.004120"}
    lines = [render(template, v).replace("\\n", "").replace("\\t", "\t") for v in (fast, values, fast)]
    text = f"$ for i in $(seq 3); do curl -s -o /dev/null -w '{template}' http://web; done\n" + "\n".join(lines)
    assert lookup(text) == 5.004512


def test_numbers_before_the_command_or_without_one_are_not_read() -> None:
    assert lookup("0.5\n2.5\n") is None
    assert lookup("2.5\ncurl -w '%{time_namelookup}\\n' http://web\n0.01\n") == 0.01
    assert lookup("curl -w '%{http_code}\\n' http://web\n503\n") is None


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_never_raises(text: str) -> None:
    curl_writeout.read(Artifact(id="p", kind=ArtifactKind.TEXT, content="curl -w '%{time_namelookup}\\n'\n" + text))
