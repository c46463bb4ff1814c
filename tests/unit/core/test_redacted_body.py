"""bot/webhook/redacted.py: a webhook body redacted alert by alert, each alert only once, gives exactly what
redacting the whole body gives, and its stored text reads back as it; bot/webhook/repeat.py's digest, made of
each alert's text, is the whole body's."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bot.webhook.redacted
from bot.webhook.redacted import redact_body, redact_notification
from bot.webhook.repeat import state_digest
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


@settings(max_examples=60, deadline=None)
@given(rest=st.dictionaries(st.text(max_size=12), JSON, max_size=4), alerts=st.lists(JSON, max_size=4))
def test_the_stored_text_is_the_redacted_body(rest: dict[str, Any], alerts: list[Any]) -> None:
    """The intake stores the text joined from each alert's remembered text: it must read back as the body."""
    sent = {**rest, "alerts": alerts}
    redacted = redact_notification(sent)
    assert json.loads(redacted.text) == redacted.body == redact_json(sent)


@settings(max_examples=60, deadline=None)
@given(rest=st.dictionaries(st.text(max_size=12), JSON, max_size=4),
       labels=st.lists(st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3), min_size=1, max_size=4))
def test_the_digest_made_of_alert_texts_is_the_whole_bodys(rest: dict[str, Any],
                                                           labels: list[dict[str, str]]) -> None:
    """Digests stored before each alert was encoded on its own (the whole body's canonical JSON) still match, so
    an upgrade takes no repeat for news."""
    alerts = [{"status": "firing", "labels": lab, "startsAt": "2026-11-29T08:00:00Z"} for lab in labels]
    sent = {**rest, "groupKey": "{}:{alertname=\"CheckoutDown\"}", "alerts": alerts}
    whole = json.dumps({k: v for k, v in sent.items() if k != "externalURL"}, sort_keys=True, separators=(",", ":"),
                       ensure_ascii=False)
    assert state_digest(sent) == hashlib.sha256(whole.encode("utf-8", "surrogatepass")).hexdigest()
