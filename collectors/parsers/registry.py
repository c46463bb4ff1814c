"""Which parser reads which kind of artifact, from the readers table (collectors/parsers/readers.py): a parser
module is imported the first time an artifact of its kind is read, not with the registry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from importlib import import_module

from collectors.models import Artifact, ArtifactKind, Citation, ParseResult
from collectors.parsers.contract import Parser, guarded
from collectors.parsers.gpu import gpu_ids, gpustat, nvidia_smi_query
from collectors.parsers.logs import curl_exit, curl_response, curl_writeout, status_fields
from collectors.parsers.metrics import figures, latency_distribution, limit_tables, load_reports
from collectors.parsers.readers import BY_KIND, GROUPED_KINDS, NAMES, READERS
from collectors.parsers.sniffing import LINE_CLAIMS, SNIFFERS
from collectors.parsers.text import signals, stated, tls_pull, words

__all__ = ["GROUPED_KINDS", "LINE_CLAIMS", "NAMES", "PARSERS", "SNIFFERS", "all_parsers", "parse_artifact", "shifted"]

Parse = Callable[[Artifact], ParseResult]


class _Parsers(dict[ArtifactKind, Parse]):
    """Each kind's parse function, its module imported on first lookup. A plain dict otherwise: a test may put a
    parser in (monkeypatch.setitem) and take it out again."""

    def __missing__(self, kind: ArtifactKind) -> Parse:
        reader = BY_KIND.get(kind)
        if reader is None:
            raise KeyError(kind)
        parser: Parser = import_module(reader.parser).PARSER
        for each in parser.kinds:
            self.setdefault(each, parser.parse)  # a parser a test put in stays
        return self[kind]

    def get(self, kind: ArtifactKind, default: Parse | None = None) -> Parse | None:  # type: ignore[override]
        try:
            return self[kind]
        except KeyError:
            return default


PARSERS: dict[ArtifactKind, Parse] = _Parsers()


def all_parsers() -> tuple[Parser, ...]:
    """Every parser in the readers' order; imports every parser module, so for tests and tools, not triage."""
    return tuple(import_module(r.parser).PARSER for r in READERS)


# Signals are read from text people pasted or files they named. A node's log a triage fetched (the kubelet's, the
# kernel's) or an NCCL rank's holds the same programs' lines as a pasted one, so the catalogued line signals read
# it too. An application's own log is read by its structural parser alone: in a live triage it is the log of the
# workload under triage (an ingress's error log, a device plugin's), whose refusals and Xids the playbooks take
# from the objects and node logs around it. The readers of prose stay for what people wrote, and API objects and
# metrics are read by their structural parser alone.
_PASTED = ("paste", "file", "slack")
_FETCHED_LOGS = (ArtifactKind.KUBELET_LOG, ArtifactKind.KERNEL_LOG, ArtifactKind.NCCL_LOG)
_WORDS_KINDS = (ArtifactKind.TEXT, ArtifactKind.CONTAINER_LOG)


def parse_artifact(artifact: Artifact) -> ParseResult:
    """Parse one artifact: its structural parser, then the line signals for what it did not read.

    Parsers do not raise; the guard only keeps a bug from failing a triage.
    """
    result = ParseResult()
    if artifact.kind != ArtifactKind.TEXT:
        result = _guarded(PARSERS.get(artifact.kind), artifact)
        result.facts = [replace(f, parser=NAMES[artifact.kind]) for f in result.facts]
    pasted = artifact.kind == ArtifactKind.TEXT or artifact.source in _PASTED
    if not pasted and artifact.kind in _FETCHED_LOGS:
        found = _guarded(_read_signals, artifact)
        result.facts += signals.without_repeats(result.facts, found.facts, False)
        result.problems += found.problems
    if pasted:
        found = _guarded(_read_signals, artifact)
        summaries = artifact.kind == ArtifactKind.ACCESS_LOG
        result.facts += stated.restate(artifact, signals.without_repeats(result.facts, found.facts, summaries))
        result.problems += found.problems
        # Sentences last: a line a program printed is read by its reader, never a second time as a statement;
        # a sentence a line signal read is read again only for the terms the signal did not give.
        read = [(f.citation.start, f.citation.end) for f in result.facts if not stated.is_stated(f)]
        told = {(f.citation.start, f.name) for f in result.facts if stated.is_stated(f)}
        programs: dict[int, set[str]] = {}
        for f in result.facts:
            if stated.is_stated(f) and (sid := stated.signal_id(f.parser)):
                programs.setdefault(f.citation.start, set()).add(sid)
        result.facts += [f for f in _guarded(lambda a: stated.read_stated(a, read, programs), artifact).facts
                         if (f.citation.start, f.name) not in told]
        # Last resort: a symptom said by its subject and its problem, on lines no reader above read at all, in
        # text no structural kind claimed or an application's own output; a known program's line keeps the
        # meaning its reader gave it (a kubelet's "Node became not ready" on restart shows no symptom).
        if artifact.kind in _WORDS_KINDS:
            claimed = [(f.citation.start, f.citation.end) for f in result.facts]
            result.facts += _guarded(lambda a: words.read_words(a, claimed), artifact).facts
    kind = str(artifact.kind)
    shift = artifact.first_line - 1  # parsers count the content's lines; the report counts the source's
    result.facts = [replace(f, kind=kind, citation=shifted(f.citation, shift)) if shift else replace(f, kind=kind)
                    for f in result.facts]
    return result


def shifted(citation: Citation, shift: int) -> Citation:
    """A citation counted from a piece's first line, counted from its source's."""
    if citation.start == 0:  # the whole artifact
        return citation
    return Citation(artifact=citation.artifact, start=citation.start + shift, end=citation.end + shift)


def _read_signals(artifact: Artifact) -> ParseResult:
    result = signals.read_signals(artifact, PARSERS)
    # curl -w output is read through the template the paste shows, which no single line says.
    timed = curl_writeout.read(artifact)
    _hand_off(result, "curl_writeout", timed, repeats=True)
    result.problems += timed.problems
    # A curl that printed no error of its own: the exit status a wrapper printed, or a verbose connect that hung.
    _hand_off(result, "curl_exit", curl_exit.read(artifact))
    # Go's bare x509 error in a paste about pulling an image.
    _hand_off(result, "tls_pull", tls_pull.read(artifact))
    # A 5xx Envoy answered itself, from the response headers curl printed.
    _hand_off(result, "curl_response", curl_response.read(artifact))
    # gpustat's line per GPU.
    gpus = gpustat.read(artifact)
    _hand_off(result, "gpustat", gpus)
    result.problems += gpus.problems
    # nvidia-smi -q's Utilization blocks, in a fragment of the report no sniffer claims.
    _hand_off(result, "nvidia_smi_query", nvidia_smi_query.read_utilization(artifact))
    # Which GPU is which, where a paste put nvidia-smi's lines under a kernel log or among unclaimed lines.
    _hand_off(result, "gpu_ids", gpu_ids.read(artifact), repeats=True)
    # A load generator's end-of-run summary: the share of its requests that failed.
    silent: list[int] = []  # the runs none of whose requests got a response
    loaded = load_reports.read(artifact, silent)
    _hand_off(result, "load_reports", loaded)
    result.problems += loaded.problems
    # A load tester's cumulative latency distribution (redis-benchmark, fortio): its p99.
    _hand_off(result, "latency_distribution", latency_distribution.read(artifact))
    # A benchmark tabulated by CPU limit whose latency falls as the limit rises: the CFS quota slowed it.
    _hand_off(result, "limit_tables", limit_tables.read(artifact))
    # A tcpdump of DNS traffic: how long each answered query waited for its answer. Imported only for a text that
    # shows a packet to or from port 53, as the readers table imports parsers: few pastes hold one, and every module
    # counts against the start-up budget (tests/unit/core/test_startup_imports.py).
    if "53: " in artifact.content or ".domain: " in artifact.content:
        _hand_off(result, "tcpdump_dns", import_module("collectors.parsers.logs.tcpdump_dns").read(artifact))
    # An HTTP status in a structured or key=value line of any program (collectors/catalogs/status_fields.yaml).
    _hand_off(result, "status_fields", status_fields.read(artifact))
    # Figures in any layout, through the metric alias catalog; a fact a signal already gave is not given twice.
    numbers = figures.read(artifact)
    result.facts += signals.without_repeats(result.facts, numbers.facts)
    result.problems += numbers.problems
    result.facts = load_reports.without_failed_timings(result.facts, silent)
    return result


def _hand_off(result: ParseResult, parser: str, reading: ParseResult, repeats: bool = False) -> None:
    """A hand-off reader's facts, named after it, added to the signals' reading: only those no reading before it
    gave, unless it reads what no other reader does (`repeats`)."""
    facts = [replace(f, parser=parser) for f in reading.facts]
    result.facts += facts if repeats else signals.without_repeats(result.facts, facts)


def _guarded(parser: Callable[[Artifact], ParseResult] | None, artifact: Artifact) -> ParseResult:
    if parser is None:
        return ParseResult(problems=[f"no parser for kind {artifact.kind}"])
    result = guarded(parser, artifact)
    if any("MemoryError" in p for p in result.problems):
        # A reader's own recovery (a YAML loader's) turned running out of memory into a problem: its reading has
        # holes, and a report built on it would look whole.
        raise MemoryError(f"parser for {artifact.kind} ran out of memory")
    return result
