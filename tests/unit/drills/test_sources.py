"""Every artifact kind has a source, every fact points at sources, and the table agrees with the parsers."""

from __future__ import annotations

from pathlib import Path

from collectors.models import ArtifactKind
from collectors.parsers.registry import parse_artifact
from collectors.vocabulary import VOCABULARY
from drills.hypotheses import index
from drills.recorded.evidence import evidence_for
from drills.recorded.incident import incident_dirs, load_incident
from drills.sources import BY_ID, SOURCES, resolve_source, source_of_kind, sources_for_fact


def test_every_artifact_kind_belongs_to_exactly_one_source() -> None:
    for kind in ArtifactKind:
        owners = [s.id for s in SOURCES if kind in s.kinds]
        assert owners == [source_of_kind(kind)], kind


def test_sources_resolve_from_what_people_type() -> None:
    for typed, wanted in (("kernel log", "kernel-log"), ("DMESG", "kernel-log"), ("pod  status", "pod-status"),
                          ("describe pod", "pod-status"), ("prometheus", "metrics"), ("DCGM", "metrics"),
                          ("nccl log", "nccl-log"), ("app logs", "app-logs"), ("conntrack -S", None),
                          ("cluster objects", "objects"), ("node", "node"), ("tea", None)):
        found = resolve_source(typed)
        assert (found.id if found else None) == wanted, typed


def test_costs_follow_how_long_getting_the_evidence_takes() -> None:
    assert BY_ID["pod-status"].cost_seconds == 60
    assert BY_ID["kernel-log"].cost_seconds == 180
    assert BY_ID["metrics"].cost_seconds == 90
    assert all(s.cost_seconds > 0 for s in SOURCES)


# Facts read only from pasted text that no drill source yields: a person's prose ("p99 fell after we removed the
# CPU limit"), Slurm's jobstats report, timings a person took with `curl -w`, `linkerd viz top`'s table and "requests
# are queued" said in words. A drill never needs them: the same causes show in cgroup counters, metrics and DNS
# errors, which it can ask for.
TEXT_ONLY = {"cpu.limit_slowed", "gpu.job_util_avg_percent", "dns.lookup_seconds", "latency.fastest_seconds",
             "serving.requests_queued", "container.not_oom_killed", "service.exposed_workloads",
             # fix round f8: large answers said to stall (the MTU's signature) and a container said to listen on
             # another port; a drill shows the same through ip link's MTUs and the Service's targetPort.
             "net.large_payloads_stall", "service.port_said_not_listened",
             # round 17: name lookups said to be slow; a drill shows the same through curl's time_namelookup.
             "dns.said_slow"}


def test_every_fact_in_the_vocabulary_points_at_a_source() -> None:
    for name in VOCABULARY:
        if name in TEXT_ONLY:
            assert VOCABULARY[name].kinds == ("text",), name
            continue
        assert sources_for_fact(name), name
        assert all(s in BY_ID for s in sources_for_fact(name))


def test_the_fact_table_agrees_with_what_recordings_yield() -> None:
    """For every fact a playbook decides on, each source that yielded it in a recording is in its table entry."""
    incident = load_incident(incident_dirs()[0])
    decided = {f for ref in index(evidence_for(incident).playbooks).values()
               for p in ref.node.predicates.values() for f in p.facts}
    for folder in incident_dirs():
        for artifact in load_incident(folder).artifacts:
            # Notes someone wrote in the channel are read too, but they are no source a trainee asks for.
            if artifact.unavailable is not None or source_of_kind(artifact.kind) == "notes":
                continue
            for fact in parse_artifact(artifact).facts:
                if fact.name in decided:
                    assert source_of_kind(artifact.kind) in sources_for_fact(fact.name), (folder.name, fact.name)


def test_docs_list_every_source_with_its_cost() -> None:
    docs = (Path(__file__).resolve().parents[3] / "docs" / "drills.md").read_text(encoding="utf-8")
    for source in SOURCES:
        assert f"| `{source.id}` | {source.label} |" in docs and f"| {source.cost_seconds} s |" in docs, source.id
