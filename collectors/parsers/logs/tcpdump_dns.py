"""Name lookups timed from a tcpdump of DNS traffic: how long the server took to answer each query.

tcpdump prints each UDP DNS packet as "<src>.<port> > <dst>.<port>: " and then, for a query, its id, "+" when
recursion is asked, optional EDNS flags ("[1au]") and "<TYPE>? <name>. (<len>)"; for an answer, the id, the rcode
when not NoError ("NXDomain", "ServFail"), the counts "<an>/<ns>/<ar>" (tcpdump print-domain.c ns_print, 3.9 to
4.99). Port 53 is printed as "domain" without -n. The packet's clock time ("23:38:45.036012", after a date with
-tttt) opens its line; with -v the addresses move to an indented second line under it.

A query is a client's (address, port, id) sent to port 53; the answer comes back from port 53 to that address and
port with the same id. The time from the first sending of a query to its answer is the lookup as the client waited
for it: a lost query resent after the stub resolver's timeout (resolv.conf(5) `timeout:`, 5 s in glibc) shows there
as seconds. Gives dns.lookup_seconds, the slowest answered lookup (the vocabulary keeps the largest); a query never
answered in the paste is not timed (the capture may have stopped). Pure: lines in, facts out.
"""

from __future__ import annotations

import re2

from collectors.models import Artifact, ParseResult
from collectors.parsers.sink import FactSink

_MAX_LINE = 512
_MAX_LINES = 50_000
_DAY = 86_400.0
_CLOCK = re2.compile(r"^(?:\d{4}-\d\d-\d\d )?(\d\d):(\d\d):(\d\d(?:\.\d+)?) ")
# "<client>.<port> > <server>.53: <id>[+] [<flags>] <TYPE>? <name>"
_QUERY = re2.compile(r"(\S+)\.(\d{1,5}) > \S+\.(?:53|domain): (?:\[[^\]]*\] )?(\d{1,5})\+?"
                     r"(?: \[[^\]]*\])* [A-Z0-9]{1,10}\? ")
# "<server>.53 > <client>.<port>: <id>[*-|$] [rcode] [q: TYPE? name.] <an>/<ns>/<ar>"
_ANSWER = re2.compile(r"\S+\.(?:53|domain) > (\S+)\.(\d{1,5}): (?:\[[^\]]*\] )?(\d{1,5})[*\-|$]*[ ]"
                      r"(?:[A-Za-z]+ )?(?:q: [A-Z0-9]{1,10}\? \S+ )?\*?\d+/\d+/\d+")


def read(artifact: Artifact) -> ParseResult:
    """dns.lookup_seconds from each query answered in the capture."""
    sink = FactSink(artifact)
    if "53: " not in artifact.content and ".domain: " not in artifact.content:
        return sink.done()
    asked: dict[tuple[str, str, str], float] = {}  # (client, port, id) -> when it was first sent
    clock: float | None = None
    for number, raw in enumerate(artifact.content.split("\n")[:_MAX_LINES], start=1):
        line = raw[:_MAX_LINE]
        if (c := _CLOCK.match(line)) is not None:
            clock = int(c.group(1)) * 3600 + int(c.group(2)) * 60 + float(c.group(3))
        if clock is None or " > " not in line:
            continue
        if (q := _QUERY.search(line)) is not None:
            asked.setdefault((q.group(1), q.group(2), q.group(3)), clock)
            continue
        a = _ANSWER.search(line)
        if a is None or (sent := asked.pop((a.group(1), a.group(2), a.group(3)), None)) is None:
            continue
        waited = clock - sent if clock >= sent else clock + _DAY - sent  # past midnight
        sink.add("dns.lookup_seconds", round(waited, 6), number)
    return sink.done()
