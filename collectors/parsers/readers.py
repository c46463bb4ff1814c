"""Which module reads each kind of evidence and which module spots it in a paste, as data: detection imports only
the small sniffer modules, and a parser module is imported when a paste holds its kind (issue #27: importing every
parser to ask each whether it recognised a one-line paste was most of `analyze`'s start).

Each parser module still exports its `PARSER` (collectors/parsers/contract.py); tests/unit/parsers/
test_parser_registry.py holds this table to them: the same kinds, sniffer, line claims and grouping."""

from __future__ import annotations

from dataclasses import dataclass

from collectors.kinds import ArtifactKind as K

_P = "collectors.parsers."
_S = "collectors.sniffers."


@dataclass(frozen=True)
class Reader:
    kinds: tuple[K, ...]  # the first is the kind detection assigns
    parser: str  # the module exporting PARSER
    sniffer: str  # the module exporting sniff(text), and claims_line(line) for a line-oriented kind
    claims_lines: bool = False  # a line-oriented log whose lines interleave with other kinds in one paste
    reads_many: bool = False  # see contract.Parser.reads_many

    @property
    def kind(self) -> K:
        return self.kinds[0]

    @property
    def name(self) -> str:
        """The parser module's own name, as every fact it gives names it (the report's trace)."""
        return self.parser.rsplit(".", 1)[-1]


def _reader(kinds: tuple[K, ...], parser: str, sniffer: str = "", claims_lines: bool = False,
            reads_many: bool = False) -> Reader:
    """A table row; a sniffer not named apart is the parser module's own (a parser light enough to load always)."""
    return Reader(kinds, _P + parser, _S + sniffer if sniffer else _P + parser, claims_lines, reads_many)


# Order matters twice: detection prefers the earlier of two equal scores, and a line of a mixed paste belongs to
# the first line-oriented kind that claims it (kernel before kubelet before NCCL before application output).
READERS: tuple[Reader, ...] = (
    _reader((K.DESCRIBE_POD,), "kubernetes.describe_pod", reads_many=True),
    _reader((K.DESCRIBE_NODE,), "kubernetes.describe_node", reads_many=True),
    _reader((K.DESCRIBE_SERVICE,), "kubernetes.describe_service", reads_many=True),
    _reader((K.K8S_OBJECT, K.POD, K.NODE), "kubernetes.k8s_objects"),
    _reader((K.EVENTS,), "kubernetes.events", reads_many=True),
    _reader((K.POD_TABLE,), "kubernetes.pod_table", reads_many=True),
    _reader((K.NODE_TABLE,), "kubernetes.node_table", reads_many=True),
    _reader((K.ENDPOINTS_TABLE,), "kubernetes.endpoints_table", reads_many=True),
    _reader((K.KERNEL_LOG,), "node.kernel", claims_lines=True),
    _reader((K.KUBELET_LOG,), "node.kubelet", "kubelet", claims_lines=True),
    _reader((K.NCCL_LOG,), "gpu.nccl", "nccl", claims_lines=True),
    _reader((K.ACCESS_LOG,), "logs.access_log"),
    _reader((K.CONTAINER_LOG,), "logs.container_log", "container_log", claims_lines=True),
    _reader((K.CONNTRACK_STATS,), "node.conntrack", reads_many=True),
    _reader((K.CPU_STAT,), "node.cpu_stat", reads_many=True),
    _reader((K.PROMETHEUS_METRICS,), "metrics.prometheus_text", reads_many=True),
    _reader((K.PROMETHEUS_QUERY,), "metrics.prometheus_api", "prometheus_api"),
    _reader((K.ALERTMANAGER,), "alerts.alertmanager", "alertmanager"),
    _reader((K.ALERT_TEXT,), "alerts.alert_text", "alert_text", reads_many=True),
    _reader((K.NVML,), "gpu.nvml", "nvml"),
    _reader((K.NVIDIA_SMI,), "gpu.nvidia_smi", "nvidia_smi", reads_many=True),
    _reader((K.TOP,), "node.top", reads_many=True),
    _reader((K.FLIGHT_RECORDER,), "gpu.flight_recorder", "flight_recorder"),
    _reader((K.NET_LINKS,), "node.net_links"),
    _reader((K.DF,), "node.shm_usage"),
    _reader((K.HPA,), "kubernetes.hpa_text"),
)

BY_KIND: dict[K, Reader] = {k: r for r in READERS for k in r.kinds}
# The parser module that reads each kind, named in every fact it gives (the report's trace).
NAMES: dict[K, str] = {k: r.name for r in READERS for k in r.kinds}
# Kinds whose blocks share one artifact wherever they are in a paste: logs, and parsers that read many blocks.
GROUPED_KINDS = frozenset(r.kind for r in READERS if r.reads_many or r.claims_lines)
