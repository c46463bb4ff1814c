"""Spotting an alert pasted as text (chat, mail, amtool, an issue body), apart from its parser (collectors/parsers/
alerts/alert_text.py)."""

from __future__ import annotations

import re

from collectors.catalogs.alert_forms import forms
from collectors.lazy_regex import LazyPattern

_TITLE = LazyPattern(r"\[(?:FIRING|RESOLVED)(?::\d+)?(?:,\s*RESOLVED:\d+)?\]\s*[A-Za-z_]|\[ALERT\] alertname:",
                     re.IGNORECASE)
_AMTOOL_HEADER = LazyPattern(r"^(?:Alertname\s{2,}Starts At\s{2,}Summary|Labels\s{2,}Annotations\s{2,}Starts At)",
                             re.MULTILINE)
# m-lab/alertmanager-github-receiver alerts/template.go: an issue body opens "Alertmanager URL: <external URL>" and
# gives each alert as "  * firing <generator URL>" before its Labels; a paste may start at either.
# messagebird/sachet's default SMS (alert_forms.yaml sachet-alert-line): a "Firing: " or "Resolved: " heading, then
# "<alertname> @<instance>" lines.
_SACHET_BODY = LazyPattern(r"^(?:Firing|Resolved): ?\n[A-Za-z_][\w:]* @\S*(?: \([^)]*\))?[ \t]*$", re.MULTILINE)
_RECEIVER_BODY = LazyPattern(r"^(?:Alertmanager URL: https?://\S+|\s*\* (?:firing|resolved) https?://\S+)\s*$",
                             re.MULTILINE)


# alert_forms.yaml status-field as it reads after unwrapping (bold taken off): "Status: firing".
_STATUS_FIELD = LazyPattern(r"^\s*(?:[-*\u2022]\s+)?\*{0,2}Status\*{0,2}\s*:\*{0,2}\s*`?(?:firing|resolved)`?\s*$",
                            re.MULTILINE | re.IGNORECASE)


def _heading(head: str) -> bool:
    """A heading naming an alert and its state (alert_forms.yaml heading-name-status) in the first lines."""
    form = next((f for f in forms() if f.spec.id == "heading-name-status"), None)
    return form is not None and any(form.regex.search(line) for line in head.split("\n", 20)[:20])


def sniff(text: str) -> int:
    """0-100 confidence that the text is an alert as pasted."""
    head = text[:8000]
    if head.lstrip().startswith(("{", "[{")):
        return 0  # JSON is the Alertmanager payload's, not ours
    if _TITLE.search(head) or _AMTOOL_HEADER.search(head) or _heading(head):
        return 90
    if _RECEIVER_BODY.search(head) or _SACHET_BODY.search(head):
        return 70
    if _STATUS_FIELD.search(head):
        return 50
    # "Labelsalertname =": an e-mail's Labels heading run into its first pair (alert_forms.yaml email-copied-heading).
    if re.search(r"(?:(?<![\w\"])|(?<=Labels))alertname\*?\s*(?:=|:)|<th>alertname</th>", head):
        return 80
    if re.search(r"\b(?:Alert|ALERT|Alertname|AlertName)\*?\s*:\*?\s*`?[A-Z_][\w:]*`?(?:\s+[-\u2013]\s+\S+)?\s*$",
                 head, re.MULTILINE):
        return 50
    return 0
