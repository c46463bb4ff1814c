"""`kubectl describe service(s)` output into selector, ready-endpoint and event facts."""

from __future__ import annotations

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.kubernetes.k8s_common import DedupSink, subject_of
from collectors.parsers.kubernetes.k8s_describe_layout import DNode, describe_blocks, describe_tree
from collectors.parsers.kubernetes.k8s_event_facts import block_events
from collectors.port_conventions import off_convention
from collectors.text import normalise

_NAME = LazyPattern(r"(\s*)Name:\s+\S")
_KEYS = LazyPattern(r"(?m)^[ \t]*(Name|Namespace|Selector|Type|IP|IPs|Port|TargetPort|NodePort|Endpoints|"
                    r"Session Affinity|External Traffic Policy|Internal Traffic Policy|LoadBalancer Ingress|"
                    r"Containers|QoS Class|Subsets|Rules):")
# Keys only a Service's description has; a pod's (Containers, QoS Class), Endpoints' (Subsets) or an Ingress's
# (Rules) rule it out.
_SERVICE_KEYS = {"Selector", "TargetPort", "Endpoints", "Session Affinity", "External Traffic Policy",
                 "Internal Traffic Policy", "LoadBalancer Ingress", "NodePort"}
_OTHER_KEYS = {"Containers", "QoS Class", "Subsets", "Rules"}
# kubectl shows at most three addresses per port, then "+ N more...".
_MORE = LazyPattern(r"\s*\+\s*(\d+)\s+more\.*")
_ADDRESS = LazyPattern(r"[0-9A-Fa-f.:\[\]]+:\d+")
_IPV4 = LazyPattern(r"\d{1,3}(?:\.\d{1,3}){3}")


def sniff(text: str) -> int:
    """0-100 confidence that the text is `kubectl describe service` output."""
    keys = set(_KEYS.findall(text[:200_000]))
    if keys & _OTHER_KEYS:
        return 0
    found = len(keys & _SERVICE_KEYS)
    if found >= 2 and "Name" in keys:
        return min(60 + 10 * found, 95)
    return 0


def parse(artifact: Artifact) -> ParseResult:
    """Read every service block of a describe paste."""
    lines = normalise(artifact.content).split("\n")
    sink = DedupSink(artifact, lines)
    for start, end in describe_blocks(lines, _NAME):
        _service_block(sink, lines, start, end)
    return sink.done()


def _service_block(sink: DedupSink, lines: list[str], start: int, end: int) -> None:
    roots = describe_tree(lines, start, end)
    top = {r.key: r for r in reversed(roots) if r.key}
    name = top["Name"].value if "Name" in top else ""
    namespace = top["Namespace"].value if "Namespace" in top else ""
    subject = subject_of("service", name, namespace) if name else None
    if (selector := top.get("Selector")) is not None:
        if selector.value and selector.value != "<none>":
            sink.add("service.selector", selector.value, selector.line, subject=subject)
        sink.add("service.has_selector", bool(selector.value) and selector.value != "<none>", selector.line,
                 subject=subject)
    _endpoints(sink, [r for r in roots if r.key == "Endpoints"], subject)
    # "IP: 10.101.33.59" (and "IPs:" for dual-stack): a client's failure to reach this address is about the
    # Service path (kube-proxy's rules), not a pod.
    ips = [(ip, r.line) for r in roots if r.key in ("IP", "IPs") for ip in r.value.replace(",", " ").split()
           if _IPV4.fullmatch(ip)]
    if ips:
        sink.add("service.cluster_ips", list(dict.fromkeys(ip for ip, _ in ips)), ips[0][1], ips[-1][1],
                 subject=subject)
    # "TargetPort: 8080/TCP" or "TargetPort: http/TCP", one row per port: joined with the pods' ports.
    targets = [(r.value.split("/", 1)[0].strip(), r.line) for r in roots if r.key == "TargetPort" and r.value]
    if targets := [(t, n) for t, n in targets if t and t != "<none>"]:
        sink.add("service.target_ports", list(dict.fromkeys(t for t, _ in targets)), targets[0][1], targets[-1][1],
                 subject=subject)
    _off_convention(sink, roots, subject)
    block_events(sink, lines, top.get("Events"), end, subject)


def _off_convention(sink: DedupSink, roots: list[DNode], subject: str | None) -> None:
    """"Port: redis  6379/TCP" then "TargetPort: 9121/TCP": kubectl prints the two rows in turn for each port, the
    port's name first ("<unset>" when it has none)."""
    ports = [r for r in roots if r.key == "Port"]
    targets = [r for r in roots if r.key == "TargetPort"]
    if len(ports) != len(targets):
        return  # cut or out of step: which target belongs to which port is not known
    off: list[tuple[str, int]] = []
    for port, target in zip(ports, targets, strict=True):
        words = port.value.split()
        if len(words) == 2 and off_convention(words[0], words[1].split("/", 1)[0],
                                              target.value.split("/", 1)[0].strip()):
            off.append((target.value.split("/", 1)[0].strip(), target.line))
    if off:
        sink.add("service.target_ports_off_convention", list(dict.fromkeys(t for t, _ in off)), off[0][1],
                 off[-1][1], subject=subject)


def _endpoints(sink: DedupSink, rows: list[DNode], subject: str | None) -> None:
    """Ready addresses: one `Endpoints:` line per port, each listing the same pods; the most any port lists."""
    counts: list[tuple[int, int]] = []
    for row in rows:
        value = row.value.strip()
        if value in ("", "<none>"):
            counts.append((0, row.line))
            continue
        listed = [a for a in value.split(",") if _ADDRESS.fullmatch(_MORE.sub("", a).strip())]
        more = _MORE.search(value)
        if not listed:
            continue  # not an address list this parser knows: leave the count unknown
        counts.append((len(listed) + (int(more.group(1)) if more else 0), row.line))
    if counts:
        sink.add("endpoints.ready", max(n for n, _ in counts), counts[0][1], counts[-1][1], subject=subject)


PARSER = Parser(kinds=(ArtifactKind.DESCRIBE_SERVICE,), parse=parse, sniff=sniff, reads_many=True)
