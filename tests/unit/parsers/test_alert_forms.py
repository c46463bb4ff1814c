"""Every alert form in collectors/catalogs/alert_forms.yaml, rendered as its program prints it with sample values,
is read back as an alert: its name, its symptom, its target and the facts its labels carry (issue #24, point 2).

The renderings follow the upstream templates' shapes (Alertmanager's template/default.tmpl and email.html, amtool's
cli/format, Grafana's default template, the Slack example of Prometheus' docs); the values are samples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.catalogs.alert_forms import forms
from collectors.catalogs.alert_labels import catalog
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.alerts import alert_text
from collectors.paste import artifacts_from_text
from playbooks.pipeline import analyse

LABELS = {"Hostname": "gpu-node-2", "alertname": "GPUXidError", "err_code": "79", "gpu": "1",
          "severity": "critical"}
NOTES = {"summary": "XID 79 on gpu-node-2 GPU 1"}
SOURCE = "http://prometheus.monitoring:9090/graph?g0.expr=DCGM_FI_DEV_XID_ERRORS+%3E+0"


def _sorted(pairs: dict[str, str]) -> list[tuple[str, str]]:
    return sorted(pairs.items())  # Go's SortedPairs: by name, bytewise (upper case first)


def subject(status: str = "firing", grafana_resolved: int = 0, by_name_only: bool = False) -> str:
    """__subject with group_by [alertname, Hostname] (or [alertname]): the group's values in label-name order, then
    the other common labels' values in brackets."""
    count = f":1, RESOLVED:{grafana_resolved}" if grafana_resolved else ":1"
    head = f"[{status.upper()}{count if status == 'firing' else ''}]"
    if by_name_only:
        return f"{head} GPUXidError (gpu-node-2 79 1 critical)"
    return f"{head} gpu-node-2 GPUXidError (79 1 critical)"


def text_alert_list(indent: str = " ") -> str:
    lines = ["Labels:", *[f"{indent}- {k} = {v}" for k, v in _sorted(LABELS)],
             "Annotations:", *[f"{indent}- {k} = {v}" for k, v in _sorted(NOTES)], f"Source: {SOURCE}"]
    return "\n".join(lines)


def opsgenie_description() -> str:
    # opsgenie.default.description (and wechat, victorops, pushover, sns, telegram, discord, webex)
    return f"{NOTES['summary']}\nAlerts Firing:\n{text_alert_list()}\n"


def msteams_text() -> str:
    # msteams/jira/mattermost: __text_alert_list_markdown, 0.26.0 and later
    body = text_alert_list("  ").replace("Annotations:", "\nAnnotations:").replace("Source:", "\nSource:")
    return f"{subject()}\n\n# Alerts Firing:\n\n{body}\n"


def grafana_message() -> str:
    body = text_alert_list().replace("Labels:", "Value: A=79\nLabels:")
    return f"{subject(grafana_resolved=1)}\n**Firing**\n\n{body}\nSilence: http://grafana/alerting/silence/new\n"


def email_html() -> str:
    label_cells = "".join(f"{k} = {v}<br />" for k, v in _sorted(LABELS))
    note_cells = "".join(f"{k} = {v}<br />" for k, v in _sorted(NOTES))
    return "\n".join([
        f"<title>{subject()}</title>",
        '<td class="alert alert-warning">',
        "  1 alert for Hostname=gpu-node-2 alertname=GPUXidError",
        "</td>",
        '<td class="content-block">',
        "  <strong>[1] Firing</strong>",
        "</td>",
        '<td class="content-block">',
        "  <strong>Labels</strong><br />",
        f"  {label_cells}",
        "  <strong>Annotations</strong><br />",
        f"  {note_cells}",
        f'  <a href="{SOURCE}">Source</a><br />',
        "</td>",
    ])


def email_as_read() -> str:
    """The same e-mail as a mail client shows it and people copy it: one pair a line."""
    return "\n".join([f"Subject: {subject()}", "", "1 alert for Hostname=gpu-node-2 alertname=GPUXidError", "",
                      "[1] Firing", "Labels", *[f"{k} = {v}" for k, v in _sorted(LABELS)],
                      "Annotations", *[f"{k} = {v}" for k, v in _sorted(NOTES)], "Source"])


def email_copied_run_together() -> str:
    """The e-mail copied from a client that drops the <br /> after each bold heading: "Labelsalertname = ...",
    and the Source link run into the last annotation."""
    labels, notes = _sorted(LABELS), _sorted(NOTES)
    return "\n".join(["[1] Firing", "Labels" + " = ".join(labels[0]), *[f"{k} = {v}" for k, v in labels[1:]],
                      "Annotations" + " = ".join(notes[0]) + "Source"])


def github_receiver_body(status: str = "firing") -> str:
    """m-lab/alertmanager-github-receiver alerts/template.go: the issue body (html/template escapes the URL)."""
    pairs = ["", "    Labels:", "", *[f"    - {k} = {v}" for k, v in _sorted(LABELS)], "",
             "    Annotations:", "", *[f"    - {k} = {v}" for k, v in _sorted(NOTES)]]
    return "\n".join(["Alertmanager URL: http://alertmanager.monitoring:9093", "",
                      f"  * {status} {SOURCE.replace('+', '&#43;')}", "  ", *pairs, ""])


def ntfy_message(status: str = "firing") -> str:
    """binwiederhier/ntfy server/templates/alertmanager.yml: the title, then the message of one alert."""
    title = "\U0001f6a8 Alert: GPUXidError" if status == "firing" else "\u2705 Resolved: GPUXidError"
    return "\n".join([title, f"Status: {status.title()}", "Receiver: ntfy", "Alert: GPUXidError",
                      "Instance: gpu-node-2:9400", f"Severity: {LABELS['severity']}",
                      "Starts at: 2024-05-02T10:11:12Z", f"Summary: {NOTES['summary']}", f"Source: {SOURCE}", ""])


def sachet_sms() -> str:
    """messagebird/sachet cmd/sachet/handlers.go newAlertText (no template, more than one alert): a heading per
    status (Go map order: either may come first), then "<alertname> @<instance>[ (<exported_instance>)]" lines."""
    return "\n".join(["Resolved: ", "GPUXidError @gpu-node-3:9400 (gpu-node-3)", "Firing: ",
                      "GPUXidError @gpu-node-2:9400", "GPUXidError @gpu-node-4:9400", ""])


def markdown_fields() -> str:
    """A webhook bridge's markdown issue body that names no alert: bold fields only."""
    return "\n".join(["## Alert Details", "", "**Status:** firing", "**Severity:** warning",
                      f"**Summary:** {NOTES['summary']}", ""])


def slack_example_mrkdwn() -> str:
    """prometheus/docs notification_examples.md's Slack text, as the template writes it (mrkdwn)."""
    details = "\n".join(f" \u2022 *{k}:* `{v}`" for k, v in _sorted(LABELS))
    return (f"*Alert:* GPUXidError - `critical`\n*Description:* {NOTES['summary']}\n*Details:*\n{details}\n")


def slack_example_as_shown() -> str:
    """The same message copied out of Slack: the mrkdwn is rendered away."""
    details = "\n".join(f"\u2022 {k}: {v}" for k, v in _sorted(LABELS))
    return f"{subject()}\nAlert: GPUXidError - critical\nDescription: {NOTES['summary']}\nDetails:\n{details}\n"


def amtool_simple(state: bool = True) -> str:
    head = "Alertname    Starts At                Summary                     " + ("State  " if state else "")
    row = "GPUXidError  2024-05-02 10:11:12 UTC  XID 79 on gpu-node-2 GPU 1  " + ("active  " if state else "")
    return f"$ amtool alert query\n{head.rstrip()}\n{row.rstrip()}\n"


def amtool_extended() -> str:
    labels = " ".join(f'{k}="{v}"' for k, v in _sorted(LABELS))
    notes = " ".join(f'{k}="{v}"' for k, v in _sorted(NOTES))
    head = "Labels".ljust(len(labels) + 2) + "Annotations".ljust(len(notes) + 2) + \
        "Starts At                Ends At                  Generator URL  State"
    row = f"{labels}  {notes}  2024-05-02 10:11:12 UTC  2024-05-02 10:16:12 UTC  {SOURCE}  active"
    return f"$ amtool alert query -o extended\n{head}\n{row}\n"


FULL = {"alert.names": ["GPUXidError"], "alert.symptoms": ["gpu-xid"], "xid.codes": [79],
        "node.name": "gpu-node-2", "alert.severity": "critical"}
RENDERS: list[tuple[str, Callable[[], str], dict[str, Any]]] = [
    ("text-alert-list", opsgenie_description, FULL),
    ("text-alert-list-markdown", msteams_text, {**FULL, "alert.status": "firing"}),
    ("grafana-default", grafana_message, {**FULL, "alert.status": "firing"}),
    ("email-html", email_html, {**FULL, "alert.status": "firing"}),
    ("email-as-read", email_as_read, {**FULL, "alert.status": "firing"}),
    ("email-copied-run-together", email_copied_run_together, {**FULL, "alert.status": "firing"}),
    ("github-receiver-body", github_receiver_body, {**FULL, "alert.status": "firing"}),
    ("github-receiver-body-resolved", lambda: github_receiver_body("resolved"), {**FULL, "alert.status": "resolved"}),
    ("slack-example-mrkdwn", slack_example_mrkdwn, FULL),
    ("slack-example-as-shown", slack_example_as_shown, {**FULL, "alert.status": "firing"}),
    # The default Slack message is its title alone: the group's values, no label names.
    ("slack-default-title", lambda: subject(by_name_only=True),
     {"alert.names": ["GPUXidError"], "alert.symptoms": ["gpu-xid"], "alert.status": "firing"}),
    # Grouped by Hostname first, the title starts with a node name: no alert name is made of it.
    ("slack-default-title-by-host", lambda: subject(), {"alert.names": None, "xid.codes": None}),
    ("amtool-simple", amtool_simple, {"alert.names": ["GPUXidError"], "alert.symptoms": ["gpu-xid"],
                                      "alert.status": "firing"}),
    ("amtool-simple-before-0.22", lambda: amtool_simple(state=False),
     {"alert.names": ["GPUXidError"], "alert.symptoms": ["gpu-xid"]}),
    ("amtool-extended", amtool_extended, {**FULL, "alert.status": "firing"}),
    ("ntfy-alertmanager-template", ntfy_message, {"alert.names": ["GPUXidError"], "alert.symptoms": ["gpu-xid"],
                                                  "alert.status": "firing", "alert.severity": "critical"}),
    ("ntfy-alertmanager-template-resolved", lambda: ntfy_message("resolved"),
     {"alert.status": "resolved", "alert.severity": "critical"}),
    ("sachet-default-sms", sachet_sms,
     {"alert.names": ["GPUXidError"], "alert.symptoms": ["gpu-xid"], "alert.status": "firing"}),
    ("markdown-fields-without-a-name", markdown_fields,
     {"alert.status": "firing", "alert.severity": "warning", "alert.names": None}),
    # alertmanager-to-github's issue title: the common labels, sorted, as name:value words.
    ("github-issue-title", lambda: "[ALERT] " + " ".join(f"{k}:{v}" for k, v in _sorted(LABELS)) + " ", FULL),
    # alertmanager-to-github's issue page: a title written from the payload's status, as its heading.
    ("github-issue-heading", lambda: "# Alert GPUXidError firing in ml namespace\n",
     {"alert.names": ["GPUXidError"], "alert.symptoms": ["gpu-xid"], "alert.status": "firing"}),
    ("github-issue-heading-resolved", lambda: "## GPUXidError resolved\n", {"alert.status": "resolved"}),
    # A heading of the alert list is no alert name.
    ("alerts-firing-heading", lambda: "# Alerts firing\n", {"alert.names": None}),
]


@pytest.mark.parametrize(("form", "render", "expected"), RENDERS, ids=[r[0] for r in RENDERS])
def test_every_form_is_read_back(form: str, render: Callable[[], str], expected: dict[str, Any]) -> None:
    report = analyse(artifacts_from_text(render(), form))
    got = {name: report.facts.get(name) for name in expected}
    assert got == expected, report.facts


@pytest.mark.parametrize("form", ["text-alert-list", "email-html", "amtool-extended", "slack-example-as-shown"])
def test_the_alerts_own_labels_lead_to_its_playbook(form: str) -> None:
    render = next(r for f, r, _ in RENDERS if f == form)
    report = analyse(artifacts_from_text(render(), form))
    lead = report.leading()
    assert lead is not None and (lead[0].playbook, lead[1].id) == ("gpu-xid", "gpu-fallen-off-bus")
    assert "err_code=79" in report.facts["alert.labels"]


def test_annotations_are_kept_apart_from_labels() -> None:
    report = analyse(artifacts_from_text(opsgenie_description(), "p"))
    assert report.facts["alert.annotations"] == ["summary=XID 79 on gpu-node-2 GPU 1"]
    assert "summary=XID 79 on gpu-node-2 GPU 1" not in report.facts["alert.labels"]
    slack = analyse(artifacts_from_text(slack_example_as_shown(), "p"))
    assert not [pair for pair in slack.facts["alert.labels"] if pair.startswith("Description=")]
    extended = analyse(artifacts_from_text(amtool_extended(), "p"))
    assert extended.facts["alert.annotations"] == ["summary=XID 79 on gpu-node-2 GPU 1"]


def test_every_catalog_form_is_rendered_here() -> None:
    # A form added to the catalog without a rendering here would go untested.
    covered = {"subject", "heading-name-status", "text-alert-list-heading", "email-copied-heading", "status-heading",
               "email-group-line",
               "status-field", "severity-field",
               "github-issue-title", "text-alert-list-pair",
               "email-pair", "slack-details-pair", "colon-pair", "github-issue-table-row",
               "github-issue-table-key", "github-issue-table-value", "amtool-extended-row", "amtool-simple-row",
               "alert-line", "sachet-alert-line"}
    assert {f.spec.id for f in forms()} == covered
    assert all(f.spec.source for f in forms())
    assert all(rule.source for rule in catalog().labels)


LABEL_CASES: list[tuple[dict[str, str], dict[str, Any]]] = [
    ({"alertname": "KubeContainerWaiting", "reason": "CreateContainerConfigError", "namespace": "ml", "pod": "a"},
     {"container.waiting.reason": "CreateContainerConfigError", "alert.symptoms": ["container-creating"]}),
    ({"alertname": "KubeQuotaFullyUsed", "namespace": "ml", "resource": "requests.nvidia.com/gpu"},
     {"quota.resources_at_limit": ["requests.nvidia.com/gpu"], "alert.symptoms": ["pending"]}),
    # KubeQuotaAlmostFull's resource is not at its limit.
    ({"alertname": "KubeQuotaAlmostFull", "namespace": "ml", "resource": "requests.cpu"},
     {"quota.resources_at_limit": None}),
    ({"alertname": "ContainerOOMKilled", "reason": "OOMKilled", "pod": "trainer-0"},
     {"container.last_terminated.reason": "OOMKilled", "pod.name": "trainer-0"}),
    # dcgm-exporter's "no Xid yet" value is no code; an unreadable one is none either.
    ({"alertname": "GPUXidError", "err_code": "0"}, {"xid.codes": None}),
    ({"alertname": "GPUXidError", "err_code": "seventy-nine"}, {"xid.codes": None}),
    ({"alertname": "DCGMXidErrors", "xid": "48", "Hostname": "n1"}, {"xid.codes": [48], "node.name": "n1"}),
    # A reason on an alert the catalog does not name is no waiting reason.
    ({"alertname": "MyCustomAlert", "reason": "Something"}, {"container.waiting.reason": None}),
]


@pytest.mark.parametrize(("labels", "expected"), LABEL_CASES, ids=[c[0]["alertname"] + str(i)
                                                                    for i, c in enumerate(LABEL_CASES)])
def test_label_facts_from_the_catalog(labels: dict[str, str], expected: dict[str, Any]) -> None:
    text = "Labels:\n" + "\n".join(f" - {k} = {v}" for k, v in sorted(labels.items()))
    report = analyse(artifacts_from_text(text, "p"))
    assert {name: report.facts.get(name) for name in expected} == expected


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab =-:\"\t<>/[]`*\u2022\nLabelsFIRING0123alertname")), max_size=300))
def test_any_text_is_read_without_raising(text: str) -> None:
    result = alert_text.parse(Artifact(id="x", kind=ArtifactKind.ALERT_TEXT, content=text))
    assert not [p for p in result.problems if p.startswith("internal:")]


def test_status_and_severity_fields_need_an_alert_status() -> None:
    # A pod's "Status: Running" or a scanner's "Severity: HIGH" is no alert: nothing sniffs it as one.
    assert alert_text.sniff("Name: web-0\nStatus: Running\nSeverity: HIGH\n") == 0
    report = analyse(artifacts_from_text("Status: Running\nSeverity: warning\n", "p"))
    assert "alert.status" not in report.facts and "alert.severity" not in report.facts
