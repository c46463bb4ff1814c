"""Which parser reads which kind of artifact: built from one list of parser modules."""

from __future__ import annotations

from collections.abc import Callable

from collectors.models import Artifact, ArtifactKind, Citation, ParseResult
from collectors.parsers.alerts import alert_text, alertmanager
from collectors.parsers.contract import Parser, guarded
from collectors.parsers.gpu import flight_recorder, gpu_ids, gpustat, nccl, nvidia_smi, nvidia_smi_query, nvml
from collectors.parsers.kubernetes import (
    describe_node,
    describe_pod,
    describe_service,
    endpoints_table,
    events,
    hpa_text,
    k8s_objects,
    node_table,
    pod_table,
)
from collectors.parsers.logs import access_log, container_log, curl_exit, curl_response, curl_writeout, status_fields
from collectors.parsers.metrics import figures, load_reports, prometheus_api, prometheus_text
from collectors.parsers.node import conntrack, cpu_stat, kernel, kubelet, net_links, shm_usage, top
from collectors.parsers.text import signals, stated, tls_pull

# Order matters twice: detection prefers the earlier of two equal scores, and a line of a mixed paste belongs to
# the first line-oriented kind that claims it (kernel before kubelet before NCCL before application output).
ALL: tuple[Parser, ...] = (
    describe_pod.PARSER,
    describe_node.PARSER,
    describe_service.PARSER,
    k8s_objects.PARSER,
    events.PARSER,
    pod_table.PARSER,
    node_table.PARSER,
    endpoints_table.PARSER,
    kernel.PARSER,
    kubelet.PARSER,
    nccl.PARSER,
    access_log.PARSER,
    container_log.PARSER,
    conntrack.PARSER,
    cpu_stat.PARSER,
    prometheus_text.PARSER,
    prometheus_api.PARSER,
    alertmanager.PARSER,
    alert_text.PARSER,
    nvml.PARSER,
    nvidia_smi.PARSER,
    top.PARSER,
    flight_recorder.PARSER,
    net_links.PARSER,
    shm_usage.PARSER,
    hpa_text.PARSER,
)

PARSERS: dict[ArtifactKind, Callable[[Artifact], ParseResult]] = {k: p.parse for p in ALL for k in p.kinds}
# The parser module that reads each kind, named in every fact it gives (the report's trace).
NAMES: dict[ArtifactKind, str] = {k: p.parse.__module__.rsplit(".", 1)[-1] for p in ALL for k in p.kinds}
SNIFFERS: dict[ArtifactKind, Callable[[str], int]] = {p.kind: p.sniff for p in ALL if p.sniff is not None}
# Kinds whose blocks share one artifact wherever they are in a paste: logs, and parsers that read many blocks.
GROUPED_KINDS = frozenset(p.kind for p in ALL if p.reads_many or p.claims_line is not None)
LINE_CLAIMS: list[tuple[ArtifactKind, Callable[[str], bool]]] = [
    (p.kind, p.claims_line) for p in ALL if p.claims_line is not None
]
# Signals are read from text people pasted or files they named; sources that fetch API objects or metrics are
# read by their structural parser alone, so a live triage is not changed by this layer.
_PASTED = ("paste", "file", "slack")


def parse_artifact(artifact: Artifact) -> ParseResult:
    """Parse one artifact: its structural parser, then the line signals for what it did not read.

    Parsers do not raise; the guard only keeps a bug from failing a triage.
    """
    result = ParseResult()
    if artifact.kind != ArtifactKind.TEXT:
        result = _guarded(PARSERS.get(artifact.kind), artifact)
        result.facts = [f.model_copy(update={"parser": NAMES[artifact.kind]}) for f in result.facts]
    if artifact.kind == ArtifactKind.TEXT or artifact.source in _PASTED:
        found = _guarded(_read_signals, artifact)
        summaries = artifact.kind == ArtifactKind.ACCESS_LOG
        result.facts += stated.restate(artifact, signals.without_repeats(result.facts, found.facts, summaries))
        result.problems += found.problems
        # Sentences last: a line a program printed is read by its reader, never a second time as a statement;
        # a sentence a line signal read is read again only for the terms the signal did not give.
        read = [(f.citation.start, f.citation.end) for f in result.facts if not stated.is_stated(f)]
        told = {(f.citation.start, f.name) for f in result.facts if stated.is_stated(f)}
        result.facts += [f for f in _guarded(lambda a: stated.read_stated(a, read), artifact).facts
                         if (f.citation.start, f.name) not in told]
    kind = str(artifact.kind)
    shift = artifact.first_line - 1  # parsers count the content's lines; the report counts the source's
    result.facts = [f.model_copy(update={"kind": kind, "citation": shifted(f.citation, shift)} if shift else
                                 {"kind": kind}) for f in result.facts]
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
    result.facts += [f.model_copy(update={"parser": "curl_writeout"}) for f in timed.facts]
    result.problems += timed.problems
    # A curl that printed no error of its own: the exit status a wrapper printed, or a verbose connect that hung.
    exits = curl_exit.read(artifact)
    result.facts += signals.without_repeats(result.facts, [f.model_copy(update={"parser": "curl_exit"})
                                                           for f in exits.facts])
    # Go's bare x509 error in a paste about pulling an image.
    tls = tls_pull.read(artifact)
    result.facts += signals.without_repeats(result.facts, [f.model_copy(update={"parser": "tls_pull"})
                                                           for f in tls.facts])
    # A 5xx Envoy answered itself, from the response headers curl printed.
    local = curl_response.read(artifact)
    result.facts += signals.without_repeats(result.facts, [f.model_copy(update={"parser": "curl_response"})
                                                           for f in local.facts])
    # gpustat's line per GPU.
    gpus = gpustat.read(artifact)
    result.facts += signals.without_repeats(result.facts, [f.model_copy(update={"parser": "gpustat"})
                                                           for f in gpus.facts])
    result.problems += gpus.problems
    # nvidia-smi -q's Utilization blocks, in a fragment of the report no sniffer claims.
    query = nvidia_smi_query.read_utilization(artifact)
    result.facts += signals.without_repeats(result.facts, [f.model_copy(update={"parser": "nvidia_smi_query"})
                                                           for f in query.facts])
    # Which GPU is which, where a paste put nvidia-smi's lines under a kernel log or among unclaimed lines.
    ids = gpu_ids.read(artifact)
    result.facts += [f.model_copy(update={"parser": "gpu_ids"}) for f in ids.facts]
    # A load generator's end-of-run summary: the share of its requests that failed.
    silent: list[int] = []  # the runs none of whose requests got a response
    loaded = load_reports.read(artifact, silent)
    result.facts += signals.without_repeats(result.facts, [f.model_copy(update={"parser": "load_reports"})
                                                           for f in loaded.facts])
    result.problems += loaded.problems
    # An HTTP status in a structured or key=value line of any program (collectors/catalogs/status_fields.yaml).
    statuses = [f.model_copy(update={"parser": "status_fields"}) for f in status_fields.read(artifact).facts]
    result.facts += signals.without_repeats(result.facts, statuses)
    # Figures in any layout, through the metric alias catalog; a fact a signal already gave is not given twice.
    numbers = figures.read(artifact)
    result.facts += signals.without_repeats(result.facts, numbers.facts)
    result.problems += numbers.problems
    result.facts = load_reports.without_failed_timings(result.facts, silent)
    return result


def _guarded(parser: Callable[[Artifact], ParseResult] | None, artifact: Artifact) -> ParseResult:
    if parser is None:
        return ParseResult(problems=[f"no parser for kind {artifact.kind}"])
    result = guarded(parser, artifact)
    if any("MemoryError" in p for p in result.problems):
        # A reader's own recovery (a YAML loader's) turned running out of memory into a problem: its reading has
        # holes, and a report built on it would look whole.
        raise MemoryError(f"parser for {artifact.kind} ran out of memory")
    return result
