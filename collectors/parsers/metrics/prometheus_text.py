"""Prometheus / OpenMetrics exposition text from a scrape (`curl host:9400/metrics`) to facts."""

from __future__ import annotations

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.gpu.gpu_ids import read_ids
from collectors.parsers.metrics.metric_facts import KNOWN_METRICS, derive
from collectors.parsers.metrics.promql_samples import Exposition, parse_exposition, parse_sample
from collectors.parsers.sink import FactSink
from collectors.text import normalise

_TYPE_LINE = LazyPattern(r"^# (?:HELP \S+ |TYPE \S+ (?:counter|gauge|histogram|gaugehistogram|summary|untyped|"
                         r"unknown|info|stateset)\b)")
# Families whose bare `name value` lines are unmistakably exporter output (cgroup cpu.stat is not).
_EXPORTER_PREFIXES = ("DCGM_FI_", "container_", "kube_", "node_", "coredns_", "nv_", "process_", "go_",
                      "promhttp_", "http_request", "apiserver_", "kubelet_")
_SNIFF_LINES = 300


def sniff(text: str) -> int:
    """0-100 confidence that the text is exposition format."""
    lines = [ln.strip() for ln in normalise(text[:100_000]).split("\n")[:_SNIFF_LINES * 2] if ln.strip()]
    lines = lines[:_SNIFF_LINES]
    if not lines:
        return 0
    if any(_TYPE_LINE.match(ln) for ln in lines):
        return 90
    strong = sum(1 for ln in lines if _looks_like_sample(ln))
    return min(90, round(90 * strong / len(lines)))


def _looks_like_sample(line: str) -> bool:
    if line.startswith("#"):
        return line == "# EOF"
    sample = parse_sample(line)
    if sample is None:
        return False
    return bool(sample.labels) or sample.name in KNOWN_METRICS or sample.name.startswith(_EXPORTER_PREFIXES)


def parse(artifact: Artifact) -> ParseResult:
    """Facts from the known dcgm-exporter, cAdvisor, kube-state-metrics, node_exporter, CoreDNS and
    Triton metrics in a scrape."""
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    exposition = parse_exposition(lines)
    for fact in derive(exposition.samples):
        # One line is its own best excerpt; a ratio over several lines needs the rendered parts.
        text = None if fact.start == fact.end else fact.text
        sink.add(fact.name, fact.value, fact.start, fact.end, text=text)
    read_ids(sink, lines)  # dcgm-exporter's UUID and pci_bus_id labels: which GPU each series is
    _report(sink, exposition)
    return sink.done()


def _report(sink: FactSink, exposition: Exposition) -> None:
    bad = exposition.bad_lines
    if not exposition.samples and (bad or exposition.comment_lines):
        sink.problem("no Prometheus samples found in the text")
    elif bad:
        sink.problem(f"{len(bad)} line(s) are not exposition samples and were skipped (first: line {bad[0]})")


PARSER = Parser(kinds=(ArtifactKind.PROMETHEUS_METRICS,), parse=parse, sniff=sniff, reads_many=True)
