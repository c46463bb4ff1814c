"""A storm whose triages all end the same way (issue 31, point 7), through real Alertmanager and a live triage of
the Kubernetes stand-in, on SQLite and PostgreSQL: six quota groups in namespace ml, which does not exist. The
roll-up's thread says the reason once, naming the groups, instead of identical "namespace ml not found" notes
naming none; each group's root still says why it has no verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.store.models import OutboxItem
from collectors.live.collect import LiveAccess
from tests.e2e.test_alert_storms import metadata
from tests.e2e.test_alertmanager_e2e import all_sent, wait_until
from tests.harness.alertmanager import start_alertmanager
from tests.harness.bot_server import WEBHOOK_TOKEN, bot_in_thread, bot_values, settings_from
from tests.harness.slack_bot import message_text
from tests.standins.kube_api import KubeStandIn
from tests.standins.slack_api import Message, SlackStandIn

GROUPS = 6


def quota_alert(n: int) -> dict[str, Any]:
    return {"labels": {"alertname": "KubeQuotaFullyUsed", "namespace": "ml", "resource": "requests.nvidia.com/gpu",
                       "resourcequota": f"gpu-quota-{n}", "job": "kube-state-metrics", "severity": "info"},
            "annotations": {"summary": f"Namespace ml is using 100% of its requests.nvidia.com/gpu quota ({n})."}}


def test_the_rollup_thread_names_each_reason_once_with_its_groups(tmp_path: Path, db_url: str) -> None:
    with SlackStandIn(channels=("C0OPS",), burst=30) as slack, KubeStandIn([]) as kube:
        values = bot_values(slack_api_url=slack.api_url, database_url=db_url,
                            permissions={"channels": {"C0OPS": ["*"]}})
        with bot_in_thread(settings_from(values)) as bot, \
                start_alertmanager(tmp_path, f"{bot.url}/alertmanager", WEBHOOK_TOKEN,
                                   group_by=["alertname", "resourcequota"]) as am:
            api = kube.api_client()
            bot.ctx.jobs.access = lambda: LiveAccess(kube=api, call_timeout=5.0, deadline=20.0)
            am.post_alerts([quota_alert(n) for n in range(GROUPS)])

            def rollup() -> Message | None:
                return next((m for m in slack.messages["C0OPS"]
                             if metadata(m).get("event_type") == "triagebot_alert_rollup"), None)

            def outcomes() -> list[Message]:
                found = rollup()
                return [m for m in slack.messages["C0OPS"] if found is not None and m.thread_ts == found.ts
                        and m.text.startswith(":mag: *")]

            def roots() -> list[Message]:
                return [m for m in slack.messages["C0OPS"]
                        if metadata(m).get("event_type") == "triagebot_alert_episode"]

            # Each group's root says why it has no verdict once its triage ended; then everything is sent.
            wait_until(lambda: len(roots()) == GROUPS and all(
                'No verdict:* namespace "ml" not found' in message_text(m) for m in roots()), 60,
                "every group's root to say why it has no verdict")
            wait_until(lambda: all_sent(bot.ctx.engine), 60, "the outbox to drain")

            found = rollup()
            assert found is not None
            (said,) = outcomes()  # one message, edited as triages ended
            lines = said.text.splitlines()
            listed = int(lines[0].removeprefix(":mag: *").split(" ", 1)[0])
            assert lines[0] == f":mag: *{listed} triages in this storm ended without a verdict*, by reason:"
            (line,) = lines[1:]  # one reason, said once
            assert line.startswith(f'• namespace "ml" not found — {listed} groups: KubeQuotaFullyUsed (resourcequota=')
            assert line.count("KubeQuotaFullyUsed (resourcequota=gpu-quota-") == listed
            # No note in the roll-up's thread. A group whose triage ended before the storm took it in (its root
            # already posted in the channel; on PostgreSQL webhooks run at once) keeps its note in its own thread:
            # every group's reason is said exactly once.
            in_thread = [m for m in slack.messages["C0OPS"] if m.thread_ts == found.ts]
            assert not [m.text for m in in_thread if m.text.startswith(":mag: namespace")]
            notes = [m for m in slack.messages["C0OPS"] if m.text.startswith(":mag: namespace")]
            assert all(m.thread_ts != found.ts for m in notes)
            assert listed + len(notes) == GROUPS and listed >= GROUPS // 2, (listed, [m.text for m in notes])
            with bot.ctx.engine.connect() as conn:
                rows = conn.execute(OutboxItem.__table__.select().where(
                    OutboxItem.idempotency_key.like("rollup:%:outcomes"))).all()
            assert len(rows) == 1
