"""Load generators' end-of-run summaries: the share of requests that failed, and which 5xx they got.

The lines are the catalog's (collectors/catalogs/load_reports.yaml, each with its tool's source). A run is read in
the order its tool prints it: hey's status rows under their heading, vegeta's code:count line, ab's and wrk's
request count before their non-2xx count, k6's http_req_failed rate. A run with no failures gives a ratio of 0,
which triggers nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from collectors.catalogs.load_reports import after_pattern, any_entry, compiled
from collectors.models import Artifact, Fact, ParseResult
from collectors.parsers.sink import FactSink

_MAX_LINE = 2048
_MAX_LINES = 50_000


# A tool prints its latency figures above its status counts: vegeta's Latencies line four lines above Status Codes.
_REPORT_SPAN = 10


def without_failed_timings(facts: list[Fact], silent: list[int]) -> list[Fact]:
    """The facts without the latency figures of a run none of whose requests got a response (`silent`: the line
    of each such run's status counts, from `read`).

    A run whose every status is 0 (vegeta's "0:30000": no name, no connection) timed how fast its requests failed,
    not how fast the service answers: its percentiles are not a latency reading (a load test against a name that
    does not resolve reports a p99 of a few milliseconds at 0% success)."""
    if not silent:
        return facts
    return [f for f in facts if not (f.name.startswith("latency.") and
                                     any(0 <= end - f.citation.start <= _REPORT_SPAN for end in silent))]


def read(artifact: Artifact, silent: list[int] | None = None) -> ParseResult:
    """The runs' facts; `silent` gets the line of each run's status counts where no request got a response."""
    lines = artifact.content.split("\n")[:_MAX_LINES]
    sink = FactSink(artifact, lines)
    entries = compiled()
    anything = any_entry()
    codes: Counter[int] = Counter()  # the status rows of the run being read
    first = 0  # the line of that run's first status row
    in_statuses = False
    requests: int | None = None  # the last request count printed, for the non-2xx line after it
    for n, raw in enumerate(lines, 1):
        line = raw[:_MAX_LINE]
        matched = False
        # Each entry's own patterns run only on a line one of them matches: trying them all on every line of a
        # 200,000-line log (two RE2 calls per entry) doubled the time of every log read line by line.
        for entry, pattern, opens in entries if anything.Match(line) else ():
            if opens is not None and opens.match(line):
                _statuses(sink, codes, first, n - 1, silent)
                codes, first, in_statuses, matched = Counter(), 0, True, True
                break
            m = pattern.match(line)
            if m is None:
                continue
            matched = True
            if entry.role == "status_count" and in_statuses:
                codes[int(m.group(1))] += int(m.group(2))
                first = first or n
            elif entry.role == "status_counts":
                pairs = Counter[int]()
                for pair in m.group(1).split():
                    code, count = pair.split(":")
                    pairs[int(code)] += int(count)
                _statuses(sink, pairs, n, n, silent)
            elif entry.role == "requests":
                requests = int(m.group(1))
            elif entry.role == "non_2xx" and requests:
                sink.add("http.error_ratio", round(int(m.group(1)) / requests, 4), n,
                         text=f"{line.strip()} of {requests} requests ({entry.tool})")
            elif entry.role == "failed_share":
                sink.add("http.error_ratio", round(float(m.group(1)) / 100, 4), n)
            elif entry.role == "check_result" and entry.after is not None and n >= 2:
                _check(sink, after_pattern(entry.after).search(lines[n - 2][:_MAX_LINE]), m, n)
            break
        if in_statuses and not matched and line.strip():
            _statuses(sink, codes, first, n - 1, silent)
            codes, first, in_statuses = Counter(), 0, False
    _statuses(sink, codes, first, len(lines), silent)
    return sink.done()


def _check(sink: FactSink, name: Any, result: Any, n: int) -> None:
    """A k6 check that names the status it expects, and how often it held: a check expecting a 5xx that passed
    counts those 5xx; a check expecting a 2xx that failed counts the responses that were not it (as ab and wrk
    count non-2xx). A check on anything else (a body, a header) says nothing of statuses."""
    if name is None:
        return
    code, passes, fails = int(name.group(1)), int(result.group(1)), int(result.group(2))
    total = passes + fails
    if not total:
        return
    if 500 <= code <= 599 and passes:
        sink.add("http.error_ratio", round(passes / total, 4), n - 1, n,
                 text=f"{passes} of {total} responses were {code} (k6 check)")
        sink.add("http.error_statuses", [code], n - 1, n)
    elif 200 <= code <= 299:
        sink.add("http.error_ratio", round(fails / total, 4), n - 1, n,
                 text=f"{fails} of {total} responses were not {code} (k6 check)")


def _statuses(sink: FactSink, codes: Counter[int], start: int, end: int, silent: list[int] | None) -> None:
    """The facts of one run's status counts: 5xx and no-status (0, a transport failure) over all requests."""
    total = sum(codes.values())
    if not total or not start:
        return
    if silent is not None and codes[0] == total:
        silent.append(start)
    failed = sum(c for code, c in codes.items() if code >= 500 or code == 0)
    end = max(start, end)
    sink.add("http.error_ratio", round(failed / total, 4), start, end,
             text=f"{failed} of {total} requests failed (5xx or no response)")
    fives = [code for code, _ in codes.most_common() if 500 <= code <= 599]
    if fives:
        sink.add("http.error_statuses", fives, start, end)
