"""bot/webhook/redacted.py: a webhook body redacted alert by alert, each alert only once, gives exactly what
redacting the whole body gives."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bot.webhook.redacted
from bot.webhook.redacted import redact_body
from collectors.redact import redact_json

# A secret with a shape the redactor knows, and one known only by its key.
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def alert(n: int, note: str = "") -> dict[str, Any]:
    return {"status": "firing", "labels": {"alertname": "CheckoutDown", "pod": f"checkout-{n}"},
            "annotations": {"description": f"token {TOKEN} {note}", "db_password": "hunter2"},
            "startsAt": "2026-11-29T08:00:00Z", "fingerprint": f"fp-{n}"}


def body(alerts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"version": "4", "groupKey": "{}:{alertname=\"CheckoutDown\"}", "status": "firing",
            "commonAnnotations": {"summary": f"see {TOKEN}"}, "alerts": alerts}


def test_the_same_as_redacting_the_whole_body() -> None:
    sent = body([alert(1), alert(2, "second")])
    assert redact_body(sent) == redact_json(sent)
    assert TOKEN not in str(redact_body(sent)) and "hunter2" not in str(redact_body(sent))


def test_an_alert_seen_before_is_not_redacted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    redacted: list[str] = []

    def counted(value: Any) -> Any:
        if isinstance(value, dict) and "labels" in value:
            redacted.append(str(value["fingerprint"]))
        return redact_json(value)

    monkeypatch.setattr(bot.webhook.redacted, "redact_json", counted)
    first, second = alert(101, "once"), alert(102, "once")
    redact_body(body([first]))
    grown = redact_body(body([first, second]))
    assert redacted == ["fp-101", "fp-102"]  # the group's second notification redacted only its new alert
    assert grown == redact_json(body([first, second]))


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=40),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                                 max_size=4), max_leaves=20)


@settings(max_examples=60, deadline=None)
@given(rest=st.dictionaries(st.text(max_size=12), JSON, max_size=4), alerts=st.lists(JSON, max_size=4))
def test_any_body_is_redacted_as_a_whole_would_be(rest: dict[str, Any], alerts: list[Any]) -> None:
    sent = {**rest, "alerts": alerts}
    assert redact_body(sent) == redact_json(sent)
