"""Facts that need two artifacts: the node a suspect rank's pod runs on.

A rank's log names its pod (`kubectl logs --prefix`), and only the Pod object names the node. The NCCL parser
gives `nccl.suspect_pods`; the Pod parser gives `pod.node` per pod. Joined, the straggler's node becomes a
`nccl.suspect_hosts` value, cited to the Pod line that binds it, so the Xid cross-check on the straggler's node
works without hostNetwork. Pure: facts in, facts out.
"""

from __future__ import annotations

from collectors.factset import FactSet
from collectors.models import Fact

JOIN = "join:pod-node"


def suspect_nodes(facts: FactSet) -> list[Fact]:
    """One `nccl.suspect_hosts` fact per suspect pod whose Pod object names its node."""
    pods = facts.get("nccl.suspect_pods")
    bound = facts.get("pod.node")
    if pods is None or bound is None:
        return []
    nodes: dict[str, Fact] = {}
    for fact in bound.sources:
        name = fact.subject.rsplit("/", 1)[-1] if fact.subject.startswith("pod/") else ""
        if name and isinstance(fact.value, str) and fact.value:
            nodes.setdefault(name, fact)
    out: list[Fact] = []
    for pod in pods.value:
        found = nodes.get(pod)
        if found is not None:
            out.append(found.model_copy(update={"name": "nccl.suspect_hosts", "value": [found.value],
                                                "parser": JOIN}))
    return out
