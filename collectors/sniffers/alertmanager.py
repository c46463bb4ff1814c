"""Spotting an Alertmanager webhook payload in a paste, apart from its parser (collectors/parsers/alerts/
alertmanager.py)."""

from __future__ import annotations

from collectors.lazy_regex import LazyPattern

# a curl command whose data argument opens a JSON body ("-d '{", "--data-raw '[", "--data @-" is not read)
CURL_POST = LazyPattern(r"""\$?\s*curl\b[^\n]*?\s(?:-d|--data(?:-raw|-binary)?)[\s=]+['"]?[\[{]""")


def sniff(text: str) -> int:
    """0-100 confidence that the text is an Alertmanager payload."""
    head = text[:8000].lstrip()
    if head.startswith("```"):  # a markdown fence around the payload ("```json")
        head = head.partition("\n")[2].lstrip()
    if CURL_POST.match(head) and '"alertname"' in head and ('"alerts"' in head or '"labels"' in head):
        # A payload posted by hand (`curl -X POST <alertmanager or receiver> -d '{"alerts": [...]}'`), as people
        # test a receiver: its alerts are read as any payload's (a made-up test alert names no symptom by itself).
        return 85
    if not head.startswith(("{", "[")):
        return 0
    # The webhook envelope (receiver or groupKey, alerts, each with labels) is Alertmanager's whatever the label
    # names: Rancher's notifier sends the same payload with its own "alert_name" label.
    if '"alerts"' in head and ('"groupKey"' in head or '"receiver"' in head) and '"labels"' in head:
        return 95
    if '"alertname"' not in head:
        return 0
    if '"alerts"' in head or ('"startsAt"' in head and '"labels"' in head):
        return 85
    return 40
