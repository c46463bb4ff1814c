"""Evidence as a person reads it: a plain sentence per fact, the raw line it came from, and where.

Shared by the Slack, terminal and markdown reports so they say the same thing. Fact names stay out of the prose:
the JSON report and `--explain` keep them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from collectors.lazy_regex import LazyPattern
from collectors.text import find_spans
from collectors.vocabulary import spec
from collectors.yaml_safe import load_file
from drills.sources import label, sources_for_fact
from playbooks.report import Evidence, HypothesisResult, Report, expressions

_SENTENCES = Path(__file__).with_name("sentences.yaml")
MAX_FACTS = 8
MAX_QUOTES = 2  # raw lines per fact; the evidence file has the rest
# A quoted line up to this length is shown whole (the renderer wraps it); a longer one keeps the matched words
# with CONTEXT characters either side, and says how much it left out. A line is never cut at a fixed column.
QUOTE_LIMIT = 400
CONTEXT = 120
_WORTH = 40  # the fewest characters worth leaving out


@dataclass(frozen=True)
class Quote:
    line: str  # the raw line as the source shows it; a very long one shortened around `spans`, marked
    place: str  # artifact:lines
    spans: tuple[tuple[int, int], ...] = ()  # where in `line` the words the fact was read from are


@dataclass(frozen=True)
class Said:
    fact: str
    sentence: str
    quotes: tuple[Quote, ...]


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    loaded = load_file(_SENTENCES) or {}
    return dict(loaded)


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, list):
        return ", ".join(_value_text(v) for v in value) or "none"
    return str(value)


def _bytes(value: Any) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return str(value)
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if size == int(size) else f"{size:.1f} {unit}"
        size /= 1024
    return str(value)


def sentence(fact: str, value: Any) -> str:
    """One sentence for a fact and its value, from sentences.yaml or, failing that, the vocabulary's meaning."""
    form = _table().get(fact)
    if isinstance(form, dict):
        form = form.get(bool(value)) if isinstance(value, bool) else None
    if isinstance(form, str):
        pct = f"{value * 100:.0f}%" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
        return form.format(v=_value_text(value), pct=pct, bytes=_bytes(value))
    found = spec(fact)
    meaning = found.meaning if found else fact
    if not isinstance(value, bool):
        # "abnormal node conditions: MemoryPressure, DiskPressure, ...": after the colon the vocabulary lists
        # every value the fact may take; said before the value seen, they would read as all seen.
        meaning = meaning.split(": ", 1)[0]
    first = meaning.split(" ", 1)[0]
    if first.isalpha() and first.islower():  # not a name such as nvidia.com/gpu or DCGM_FI_DEV_XID_ERRORS
        meaning = meaning[:1].upper() + meaning[1:]
    if isinstance(value, bool):
        return f"{meaning}." if value else f"Not so: {meaning}."
    return f"{meaning}: {_value_text(value)}."


def _elided(count: int) -> str:
    return f"[… {count} chars …]"


def shorten(line: str, spans: list[tuple[int, int]]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """A long line kept around its matched spans, the parts left out marked with their size; the spans moved to
    where they now are. The spans themselves are never left out; nor is any of a line up to QUOTE_LIMIT."""
    if len(line) <= QUOTE_LIMIT:
        return line, tuple(spans)
    if not spans:
        # Nothing to centre on (a yes/no fact names no words): more of the line, from its start, where a message
        # usually says what it is.
        if len(line) <= 2 * QUOTE_LIMIT:
            return line, ()
        return line[:2 * QUOTE_LIMIT] + " " + _elided(len(line) - 2 * QUOTE_LIMIT), ()
    keep: list[tuple[int, int]] = []  # windows of the line to keep, merged where they touch
    for start, end in spans:
        window = (max(0, start - CONTEXT), min(len(line), end + CONTEXT))
        # A few characters are not worth a marker longer than they are: keep them.
        window = (0 if window[0] <= _WORTH else window[0], len(line) if len(line) - window[1] <= _WORTH else window[1])
        if keep and window[0] <= keep[-1][1] + _WORTH:
            keep[-1] = (keep[-1][0], max(keep[-1][1], window[1]))
        else:
            keep.append(window)
    out, moved, at = "", [], 0
    for start, end in keep:
        if start > at:
            out += (" " if out else "") + _elided(start - at) + " "
        shift = len(out) - start
        moved += [(a + shift, b + shift) for a, b in spans if start <= a and b <= end]
        out += line[start:end]
        at = end
    if at < len(line):
        out += " " + _elided(len(line) - at)
    return out, tuple(moved)


def quote(e: Evidence) -> Quote:
    """The cited line, on one line, with where the fact's words are in it. A query's cited text is the query,
    kept whole (it is copied to run again); the sample it returned is what a reader needs beside it."""
    flat = " ".join(part.strip() for part in e.excerpt.strip().splitlines())
    if e.kind == "prometheus-query":
        return Quote(f"{flat} → {_value_text(e.value)}", e.place)
    line, spans = shorten(flat, find_spans(flat, e.value))
    return Quote(line, e.place, spans)


def why(h: HypothesisResult, facts: dict[str, Any]) -> list[Said]:
    """The evidence behind a hypothesis, one entry per fact the deciding rule used, strongest first."""
    if not h.evidence:
        # A report stored before evidence was structured has only its `because` lines; show them as they are.
        return [Said("", line, ()) for line in h.because[:MAX_FACTS]]
    # The facts the deciding predicate read: evidence beyond those supports nothing the status rests on.
    used = expressions(h)
    chosen = [e for e in h.evidence if used[e.fact] != "cite"] or list(h.evidence)
    grouped: dict[str, list[Evidence]] = {}
    for e in chosen:
        grouped.setdefault(e.fact, []).append(e)
    out: list[Said] = []
    # One line often shows two facts (an Xid line: the code and the bus): quote it once.
    shown: set[tuple[str, str]] = set()
    for fact, items in list(grouped.items())[:MAX_FACTS]:
        value = facts.get(fact, items[0].value)
        quotes = [q for q in dict.fromkeys(quote(e) for e in items if e.excerpt)
                  if (q.line, q.place) not in shown][:MAX_QUOTES]
        shown.update((q.line, q.place) for q in quotes)
        out.append(Said(fact, sentence(fact, value), tuple(quotes)))
    return out


def target_words(report: Report) -> str:
    """The target in words, on one line: "checkout in namespace shop, pod checkout-7d, on node gpu-2 (cluster c)"."""
    t = report.target
    kind, _, named = (t.service or "").partition("/")
    if kind == "namespace" and named:  # the namespace as a whole (an alert about its ResourceQuotas)
        return f"namespace {named}" + (f" (cluster {t.cluster})" if t.cluster else "")
    if kind == "node" and named:  # cluster-scoped: no namespace
        instance = f" (instance {t.instance})" if t.instance and t.instance.split(":")[0] != named else ""
        return f"node {t.node or named}{instance}" + (f" (cluster {t.cluster})" if t.cluster else "")
    main = (f"service {t.service}" if t.service and t.service != t.pod else f"pod {t.pod}" if t.pod
            else f"node {t.node}" if t.node else "")
    if not main:
        if t.namespace:
            return f"namespace {t.namespace}"
        pod, namespace = report.facts.get("pod.name"), report.facts.get("pod.namespace")
        about = f" about pod {pod}" + (f" in namespace {namespace}" if namespace else "") if pod else ""
        return "pasted evidence" + about
    words = main + (f" in namespace {t.namespace}" if t.namespace else "")
    if t.pod and not main.startswith("pod "):
        words += f", pod {t.pod}"
    if t.node and not main.startswith("node "):
        words += f", on node {t.node}"
    if t.cluster:
        words += f" (cluster {t.cluster})"
    return words


def settled_by(hypotheses: list[HypothesisResult]) -> list[str]:
    """The sources whose evidence would settle these unknown hypotheses, named as a person asks for them."""
    needed = dict.fromkeys(n for h in hypotheses for n in h.needs)
    sources: dict[str, None] = {}
    for name in needed:
        found = sources_for_fact(name)
        if found:
            sources[label(found[0])] = None
    return list(sources)


def unknown_line(hypotheses: list[HypothesisResult]) -> str:
    """The open hypotheses folded into one line, with the evidence that would settle them."""
    ids = ", ".join(h.id for h in hypotheses)
    sources = settled_by(hypotheses)
    tail = f"; {', '.join(sources)} would settle them" if sources else ""
    return f"Not settled ({len(hypotheses)}): {ids}{tail}."


_CITED = LazyPattern(r"^(?P<fact>[a-z_][\w.]*) = (?P<value>.*) \((?P<place>[^()]*)\)$")


def plain(line: str, facts: dict[str, Any]) -> str:
    """A `fact = value (file:line)` citation said as a sentence with its place; other text as it is."""
    found = _CITED.match(line)
    if found is None or found["fact"] not in facts:
        return line
    return f"{sentence(found['fact'], facts[found['fact']])} ({found['place']})"
