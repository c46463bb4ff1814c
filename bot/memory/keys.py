"""What a stored report says an incident was about, as the keys recurrence links incidents by.

Pure: a report's JSON (the stored `triage_runs.report`) in, an `IncidentKeys` out. Only facts the report already
holds are read (target, facts, lead): the node, the GPU (UUID, serial, or bus id on its node, from the alert's labels
or from `gpu.identities` the evidence printed), the image (its digest
when the reference carries one), the workload, the namespace and the leading hypothesis. A value the report does not
hold is left out, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import re2

from collectors.catalogs.xid import lookup
from collectors.parsers.gpu.gpu_ids import bus_id, parse_entry

# Alert labels that name a node, a GPU or an image (dcgm-exporter's, kube-state-metrics', node_exporter's).
_NODE_LABELS = ("node", "hostname", "kubernetes_node", "nodename")
_UUID_LABELS = ("uuid", "gpu_uuid")
_SERIAL_LABELS = ("serial", "gpu_serial")
_BUS_LABELS = ("pci_bus_id", "busid", "bus_id")
_INDEX_LABELS = ("gpu",)
_IMAGE_LABELS = ("image",)

# A Deployment's pod: <name>-<pod-template-hash>-<suffix>, both drawn from Kubernetes' consonant-and-digit alphabet.
_DEPLOYMENT_POD: Any = re2.compile(
    r"^(.+)-[bcdfghjklmnpqrstvwxz2456789]{5,10}-[bcdfghjklmnpqrstvwxz2456789]{5}$")
_SCOPES_WITHOUT_WORKLOAD = ("pod", "node", "namespace")

# Every fact and report field the keys are read from: the store query reads these parts of a stored report, not
# the whole report (findings and trace make it tens of kilobytes).
FACTS_READ = ("alert.labels", "pod.name", "pod.namespace", "pod.node", "node.name", "xid.codes", "xid.hosts",
              "xid.pci_bus_ids", "gpu.identities", "container.image", "image.name", "container.waiting.reason",
              "nccl.suspect_hosts")
FIELDS_READ = ("target", "lead", "symptoms")


@dataclass(frozen=True)
class Gpu:
    """One GPU as the report names it: `key` identifies it across incidents, `label` is how people say it."""

    key: str  # "uuid:GPU-…", "serial:…" or "bus:<node>/<bus id>"
    name: str  # "GPU 1", "GPU 0000:2b:00"
    node: str | None

    @property
    def label(self) -> str:
        return f"{self.name} on {self.node}" if self.node else self.name


@dataclass(frozen=True)
class IncidentKeys:
    nodes: frozenset[str] = frozenset()
    gpus: tuple[Gpu, ...] = ()
    images: frozenset[str] = frozenset()
    workload: str | None = None  # "<namespace>/<kind>/<name>", or "<namespace>/<name>" for a bare service
    namespace: str | None = None
    leader: str | None = None  # "playbook/hypothesis"
    hardware_xids: frozenset[int] = frozenset()  # Xid codes the catalog places in the hardware
    crash_looping: bool = False
    nccl_hang: bool = False
    suspect_nodes: frozenset[str] = frozenset()  # the hosts NCCL's hang evidence points at
    symptoms: frozenset[str] = field(default_factory=frozenset)


def _labels(facts: Mapping[str, Any]) -> dict[str, list[str]]:
    """alert.labels ("name=value") by lower-cased name."""
    out: dict[str, list[str]] = {}
    for item in _strings(facts.get("alert.labels")):
        name, sep, value = item.partition("=")
        if sep and value.strip():
            out.setdefault(name.strip().lower(), []).append(value.strip())
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [v.strip() for v in value if isinstance(v, str) and v.strip()]
    return []


def _pick(labels: Mapping[str, list[str]], names: Iterable[str]) -> list[str]:
    return [v for name in names for v in labels.get(name, [])]


def image_key(reference: str) -> str | None:
    """The digest when the reference pins one (the same bytes whatever the tag), else the reference itself."""
    ref = reference.strip()
    if not ref:
        return None
    _, at, digest = ref.partition("@")
    return digest if at and digest.startswith("sha256:") else ref


def workload_of(target: Mapping[str, Any], facts: Mapping[str, Any], namespace: str | None) -> str | None:
    """The workload: the target's kind/name when it names one, else a Deployment's name read off its pod's name."""
    if namespace is None:
        return None
    service = target.get("service")
    if isinstance(service, str) and service.strip():
        kind = service.split("/", 1)[0] if "/" in service else ""
        if kind not in _SCOPES_WITHOUT_WORKLOAD:
            return f"{namespace}/{service.strip()}"
    pod = target.get("pod") or facts.get("pod.name")
    if isinstance(pod, str) and (found := _DEPLOYMENT_POD.match(pod.strip())) is not None:
        return f"{namespace}/deployment/{found.group(1)}"
    return None


def _nodes(target: Mapping[str, Any], facts: Mapping[str, Any], labels: Mapping[str, list[str]]) -> list[str]:
    named = [target.get("node"), facts.get("pod.node"), facts.get("node.name")]
    out = [n.strip() for n in named if isinstance(n, str) and n.strip()]
    out += _strings(facts.get("xid.hosts")) + _pick(labels, _NODE_LABELS)
    return list(dict.fromkeys(out))


def _gpus(facts: Mapping[str, Any], labels: Mapping[str, list[str]], nodes: list[str]) -> tuple[Gpu, ...]:
    """The GPUs the report names. A bus id is only unique on its node, so it keys a GPU only with one node known."""
    xid_hosts = _strings(facts.get("xid.hosts"))
    node = xid_hosts[0] if len(xid_hosts) == 1 else (nodes[0] if len(nodes) == 1 else None)
    index = _pick(labels, _INDEX_LABELS)
    name = f"GPU {index[0]}" if len(index) == 1 else None
    gpus: list[Gpu] = []
    for uuid in _pick(labels, _UUID_LABELS):
        gpus.append(Gpu(key=f"uuid:{uuid.lower()}", name=name or uuid, node=node))
    for serial in _pick(labels, _SERIAL_LABELS):
        gpus.append(Gpu(key=f"serial:{serial}", name=name or f"GPU serial {serial}", node=node))
    for found in _identified(facts):
        bus = found.get("bus")
        said = name or (f"GPU {bus}" if bus else None)
        if "uuid" in found:
            gpus.append(Gpu(key=f"uuid:{found['uuid']}", name=said or found["uuid"], node=node))
        if "serial" in found:
            gpus.append(Gpu(key=f"serial:{found['serial']}", name=said or f"GPU serial {found['serial']}", node=node))
    if node is not None:
        buses = {b for text in _strings(facts.get("xid.pci_bus_ids")) + _pick(labels, _BUS_LABELS)
                 if (b := bus_id(text)) is not None}
        for bus in sorted(buses):
            gpus.append(Gpu(key=f"bus:{node}/{bus}", name=name if name and len(buses) == 1 else f"GPU {bus}",
                            node=node))
    return tuple(dict.fromkeys(gpus))


def _identified(facts: Mapping[str, Any]) -> list[dict[str, str]]:
    """The GPUs the evidence names by UUID or serial (`gpu.identities`) that this incident is about: those on the
    bus an Xid came from, or the only GPU the evidence names. A node's whole `nvidia-smi -q` names every board on
    it; linking by all of them would say "this GPU came back" of boards nothing happened to."""
    known = [parse_entry(text) for text in _strings(facts.get("gpu.identities"))]
    known = [k for k in known if "uuid" in k or "serial" in k]
    xid_buses = {b for text in _strings(facts.get("xid.pci_bus_ids")) if (b := bus_id(text)) is not None}
    if xid_buses:
        return [k for k in known if k.get("bus") in xid_buses]
    return known if len({k.get("uuid") or k.get("serial") for k in known}) == 1 else []


def _leader(report: Mapping[str, Any]) -> str | None:
    lead = report.get("lead")
    if isinstance(lead, dict) and lead.get("playbook") and lead.get("hypothesis"):
        return f"{lead['playbook']}/{lead['hypothesis']}"
    return None


def _ints(value: Any) -> list[int]:
    return [v for v in value if isinstance(v, int) and not isinstance(v, bool)] if isinstance(value, list) else []


def incident_keys(report: Mapping[str, Any]) -> IncidentKeys:
    """The keys of one stored report; a report of another shape gives empty keys, never an error."""
    target = report.get("target") if isinstance(report.get("target"), dict) else {}
    facts = report.get("facts") if isinstance(report.get("facts"), dict) else {}
    assert isinstance(target, dict) and isinstance(facts, dict)  # narrowed for the type checker
    labels = _labels(facts)
    nodes = _nodes(target, facts, labels)
    namespace = next(iter(_strings(target.get("namespace")) + _strings(facts.get("pod.namespace"))
                          + _pick(labels, ("namespace",))), None)
    images = {k for ref in _strings(facts.get("container.image")) + _strings(facts.get("image.name"))
              + _pick(labels, _IMAGE_LABELS) if (k := image_key(ref)) is not None}
    leader = _leader(report)
    symptoms = set(_strings(report.get("symptoms")))
    hardware = {c for c in _ints(facts.get("xid.codes"))
                if (entry := lookup(c)) is not None and entry.cause_class == "hardware"}
    crash = "crash-loop" in symptoms or facts.get("container.waiting.reason") == "CrashLoopBackOff" or \
        (leader or "").startswith("crash-loop/")
    hang = "nccl-hang" in symptoms or (leader or "").startswith("nccl-hang/")
    return IncidentKeys(
        nodes=frozenset(nodes), gpus=_gpus(facts, labels, nodes), images=frozenset(images),
        workload=workload_of(target, facts, namespace), namespace=namespace, leader=leader,
        hardware_xids=frozenset(hardware), crash_looping=crash, nccl_hang=hang,
        suspect_nodes=frozenset(_strings(facts.get("nccl.suspect_hosts"))), symptoms=frozenset(symptoms))
