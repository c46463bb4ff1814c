"""triagebot's own metrics, served on /metrics."""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


@dataclass
class Metrics:
    """One registry per server, so tests and two apps in one process do not collide."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.triages = Counter("triagebot_triages", "Triages run, by trigger and outcome.",
                               ["trigger", "outcome"], registry=r)
        self.triage_seconds = Histogram("triagebot_triage_duration_seconds", "Wall time of one triage.",
                                        ["trigger"], registry=r,
                                        buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40))
        self.missing_sources = Counter("triagebot_missing_sources", "Sources a triage could not read.",
                                       ["source"], registry=r)
        self.alerts = Counter("triagebot_alerts_received", "Alerts received on the webhook, by status.",
                              ["status"], registry=r)
        self.webhook_rejected = Counter("triagebot_webhook_rejected", "Webhook requests refused, by reason.",
                                        ["reason"], registry=r)
        self.slack_errors = Counter("triagebot_slack_errors", "Slack Web API errors, by method and error.",
                                    ["method", "error"], registry=r)
        self.lookup_settled = Counter("triagebot_slack_lookup_settled",
                                      "Waiting posts settled by another post's history lookup (found: already in "
                                      "Slack; absent: posts without a lookup), and lookups deferred for budget.",
                                      ["outcome"], registry=r)
        self.outbox_depth = Gauge("triagebot_outbox_depth", "Slack posts waiting in the outbox.", registry=r)
        self.commands = Counter("triagebot_commands", "Slack commands and actions handled.", ["command"],
                                registry=r)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
