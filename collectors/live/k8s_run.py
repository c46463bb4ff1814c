"""One Kubernetes collection run: its calls on the pool, its artifacts and `missing` entries in the order the calls
were issued, and the events of one object (which the pods' and the nodes' reads both need).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from collectors.k8s_values import as_dict
from collectors.live.base import SourceResult, Window, artifact_id
from collectors.live.k8s_calls import Failure, KubeCalls, Runner
from collectors.live.k8s_logs import Limits
from collectors.live.k8s_ranks import RankLimits
from collectors.live.k8s_util import dump, items_of, kubectl, list_doc
from collectors.models import Artifact, ArtifactKind, Missing, Target

EVENT_LIMIT = 500  # events kept per object


@dataclass
class _Ordered:
    """Artifacts and missing entries, kept in the order their calls were issued, not the order answers
    arrived, so the same cluster state always gives the same report."""

    artifacts: dict[int, Artifact] = field(default_factory=dict)
    missing: dict[int, list[Missing]] = field(default_factory=dict)
    next_slot: int = 0

    def slot(self) -> int:
        self.next_slot += 1
        return self.next_slot

    def result(self) -> SourceResult:
        return SourceResult(artifacts=[self.artifacts[k] for k in sorted(self.artifacts)],
                            missing=[m for k in sorted(self.missing) for m in self.missing[k]])


class CollectionBase:
    """One collection run: its calls, its artifacts and what could not be read; the reads of
    collectors/live/k8s_objects.py, k8s_nodes.py and kubernetes.py build on it."""

    def __init__(self, calls: KubeCalls, runner: Runner, target: Target, window: Window, limits: Limits,
                 rank_limits: RankLimits, flight_recorder_dir: str | None = None) -> None:
        self.calls = calls
        self.rank_limits = rank_limits
        self.flight_recorder_dir = flight_recorder_dir
        self.runner = runner
        self.target = target
        self.window = window
        self.limits = limits
        self.ns = target.namespace or "default"
        self.out = _Ordered()
        self.ids: set[str] = set()
        self.nodes: dict[str, dict[str, Any]] = {}  # node objects read, by name, for the Scope

    # ---- output helpers --------------------------------------------------------------------------------

    def artifact(self, slot: int, kind: ArtifactKind, parts: tuple[str, ...], ext: str, subject: str,
                 command: str, content: str) -> None:
        self.out.artifacts[slot] = Artifact(
            id=self._unique(artifact_id("k8s", *parts) + ext), kind=kind, subject=subject, source="kubernetes",
            command=command, captured_at=datetime.now(UTC), content=content)

    def _unique(self, candidate: str) -> str:
        stem, dot, ext = candidate.rpartition(".")
        unique, n = candidate, 1
        while unique in self.ids:
            n += 1
            unique = f"{stem}-{n}{dot}{ext}" if dot else f"{candidate}-{n}"
        self.ids.add(unique)
        return unique

    def missing(self, slot: int, what: str, reason: str) -> None:
        self.out.missing.setdefault(slot, []).append(Missing(source=f"kubernetes:{what}", reason=reason))

    def _since(self) -> datetime:
        return self.window.since.astimezone(UTC)

    def report(self, what: str, failure: Failure) -> None:
        self.missing(self.out.slot(), what, failure.reason)

    def fetch(self, thunk: Callable[[], Any], then: Callable[[int, Any], None]) -> None:
        """Run a call on the pool; its result reaches `then` on this thread with a slot fixed now."""
        slot = self.out.slot()

        def guarded(result: Any) -> None:
            try:
                then(slot, result)
            except Exception as exc:  # a bug in handling one answer must not cost the rest of the evidence
                self.missing(slot, "internal", f"could not use an answer: {type(exc).__name__}: {exc}")

        self.runner.submit(thunk, guarded)

    # ---- events ------------------------------------------------------------------------------------------

    def _events(self, kind: str, name: str, namespace: str | None, subject: str,
                into: Callable[[list[dict[str, Any]] | None], None] | None = None) -> None:
        """Events about one object, by involvedObject field selector; node events live in any namespace."""
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        calls = self.calls
        if namespace is None:
            command = kubectl("get", "events", "-A", "--field-selector", selector, "-o", "json")

            def thunk() -> Any:
                return calls.get_list(calls.core.list_event_for_all_namespaces, field_selector=selector,
                                      max_items=EVENT_LIMIT)
        else:
            command = kubectl("get", "events", "-n", namespace, "--field-selector", selector, "-o", "json")

            def thunk() -> Any:
                return calls.get_list(calls.core.list_namespaced_event, namespace, field_selector=selector,
                                      max_items=EVENT_LIMIT)

        def then(slot: int, result: dict[str, Any] | Failure) -> None:
            if isinstance(result, Failure):
                self.missing(slot, f"events {subject}", result.reason)
                if into is not None:
                    into(None)
                return
            if into is not None:  # rendered inside a describe instead of as its own artifact
                into(items_of(result))
                return
            doc = list_doc("v1", "Event", items_of(result), as_dict(result.get("metadata")))
            self.artifact(slot, ArtifactKind.EVENTS, ("events", *subject.split("/")), ".json", subject, command,
                          dump(doc))

        self.fetch(thunk, then)
