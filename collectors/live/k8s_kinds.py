"""The workload kinds the live source reads (Deployments, Jobs, the training operators' jobs) and which of them
owns a pod: the object a person would name, followed up the owner chain or read from an operator's pod label.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from collectors.k8s_values import as_dict, as_int, as_list, as_str
from collectors.live.k8s_util import kubectl, labels_of, meta, rank_env, rank_label, selector_string


@dataclass(frozen=True)
class Kind:
    """An object kind the resolver reads: where it lives and which pod label names it."""

    kind: str
    group: str  # "" for core, "apps", "batch", or a CRD group
    version: str
    plural: str
    pod_label: str = ""  # label the controller puts on its pods with the object's name
    short: str = ""  # the `kind/name` prefix in Scope.workload and artifact subjects

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource(self) -> str:
        """The resource name kubectl needs: plain for built-ins, `plural.group` for CRDs."""
        return self.plural if self.group in ("", "apps", "batch") else f"{self.plural}.{self.group}"

    @property
    def ref(self) -> str:
        return self.short or self.kind.lower()

    @property
    def is_crd(self) -> bool:
        return self.group not in ("", "apps", "batch")


DEPLOYMENT = Kind("Deployment", "apps", "v1", "deployments")
STATEFULSET = Kind("StatefulSet", "apps", "v1", "statefulsets")
DAEMONSET = Kind("DaemonSet", "apps", "v1", "daemonsets")
REPLICASET = Kind("ReplicaSet", "apps", "v1", "replicasets")
JOB = Kind("Job", "batch", "v1", "jobs", "batch.kubernetes.io/job-name")
PYTORCHJOB = Kind("PyTorchJob", "kubeflow.org", "v1", "pytorchjobs", "training.kubeflow.org/job-name")
MPIJOB = Kind("MPIJob", "kubeflow.org", "v2beta1", "mpijobs", "training.kubeflow.org/job-name")
MPIJOB_V1 = Kind("MPIJob", "kubeflow.org", "v1", "mpijobs", "training.kubeflow.org/job-name")
JOBSET = Kind("JobSet", "jobset.x-k8s.io", "v1alpha2", "jobsets", "jobset.sigs.k8s.io/jobset-name")
VCJOB = Kind("Job", "batch.volcano.sh", "v1alpha1", "jobs", "volcano.sh/job-name", short="vcjob")
LWS = Kind("LeaderWorkerSet", "leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "leaderworkerset.sigs.k8s.io/name",
           short="lws")
# Tried in this order for `job/NAME` after a batch Job; a 404 just means the operator is not installed.
TRAINING_JOBS = (PYTORCHJOB, MPIJOB, MPIJOB_V1, JOBSET, VCJOB, LWS)
DISTRIBUTED = {PYTORCHJOB, MPIJOB, MPIJOB_V1, JOBSET, VCJOB, LWS}
_BY_OWNER = {k.kind: k for k in (DEPLOYMENT, STATEFULSET, DAEMONSET, REPLICASET, JOB, PYTORCHJOB, MPIJOB, JOBSET)}
_OPERATORS = {"pytorchjob-controller": PYTORCHJOB, "mpijob-controller": MPIJOB, "mpi-operator": MPIJOB}


@dataclass
class Workload:
    """The controller behind the pods, with its object when it could be read."""

    kind: Kind
    name: str
    obj: dict[str, Any] | None = None

    @property
    def ref(self) -> str:
        return f"{self.kind.ref}/{self.name}"

    def selector(self) -> str:
        """The label selector of this workload's pods ("" when it cannot be told)."""
        if self.kind in DISTRIBUTED:
            return f"{self.kind.pod_label}={self.name}"
        spec_selector = as_dict(as_dict((self.obj or {}).get("spec")).get("selector"))
        if spec_selector:
            return selector_string(spec_selector)
        return f"{self.kind.pod_label}={self.name}" if self.kind.pod_label else ""

    def command(self, namespace: str) -> str:
        return kubectl("get", self.kind.resource, "-n", namespace, self.name, "-o", "json")


def owner_workload(pods: list[dict[str, Any]]) -> tuple[Kind, str] | None:
    """The controller most of the pods belong to, followed up to the object a person would name."""
    votes: Counter[tuple[Kind, str]] = Counter()
    for pod in pods:
        if (found := _pod_owner(pod)) is not None:
            votes[found] += 1
    return votes.most_common(1)[0][0] if votes else None


def _pod_owner(pod: dict[str, Any]) -> tuple[Kind, str] | None:
    labels = labels_of(pod)
    # Operators label their pods; the label outranks the owner chain (a JobSet's pods belong to child Jobs).
    if jobset := labels.get(JOBSET.pod_label):
        return JOBSET, jobset
    if (job := labels.get(PYTORCHJOB.pod_label)) and (
            op := _OPERATORS.get(labels.get("training.kubeflow.org/operator-name", ""))):
        return op, job
    if vcjob := labels.get(VCJOB.pod_label):
        return VCJOB, vcjob
    if lws := labels.get(LWS.pod_label):
        return LWS, lws
    owners = [as_dict(o) for o in as_list(meta(pod).get("ownerReferences"))]
    owner = next((o for o in owners if o.get("controller") is True), owners[0] if owners else None)
    if owner is None:
        return None
    kind, name = as_str(owner.get("kind")), as_str(owner.get("name"))
    if kind == "ReplicaSet":
        # A Deployment names its ReplicaSets `<deployment>-<pod-template-hash>`.
        suffix = labels.get("pod-template-hash", "")
        if suffix and name.endswith(f"-{suffix}"):
            return DEPLOYMENT, name[: -len(suffix) - 1]
    if kind in _BY_OWNER and name:
        return _BY_OWNER[kind], name
    return None


def is_distributed(workload: Workload | None, pods: list[dict[str, Any]]) -> bool:
    """A multi-rank job: a training operator's job, an Indexed Job with parallelism, or ranks in the env."""
    if workload is not None and workload.kind in DISTRIBUTED:
        return True
    if workload is not None and workload.kind is JOB and workload.obj is not None:
        spec = as_dict(workload.obj.get("spec"))
        if as_str(spec.get("completionMode")) == "Indexed" and (as_int(spec.get("parallelism")) or 1) > 1:
            return True
    if any("WORLD_SIZE" in env or "MASTER_ADDR" in env for env in map(rank_env, pods)):
        return True
    return len(pods) > 1 and all(rank_label(p) for p in pods)  # hand-made ranks: plain pods with a rank label
