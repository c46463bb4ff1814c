"""Alert rules and the Alertmanager receiver example, checked with the real promtool and amtool.

- `promtool check rules` and `promtool test rules` pass, and every alert has a unit test that makes it
  fire (with exact labels and annotations) and one that keeps it quiet;
- rules.yml and prometheusrule.yaml hold the same rules (the second is generated from the first);
- the workload alerts are named so collectors/catalogs/alerts.yaml maps them to the intended playbooks,
  and the triagebot_* metrics the health alerts use are ones bot/metrics.py exports;
- `amtool check-config` passes on the receiver example, which sends the workload alerts to the bot and
  triagebot's own health alerts elsewhere;
- GPUXidError pages exactly on the Xid catalog's paging codes (hardware and driver faults) and warns on the rest,
  and every rule carries a runbook_url whose anchor docs/runbooks.md has (issue 28, point 1).
"""

from __future__ import annotations

import re
import subprocess
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from collectors.catalogs.alert_map import symptom_for
from collectors.catalogs.xid import paging_codes
from tests.deploy.support import ALERTMANAGER, BASE, PROMETHEUS, amtool, load_yaml, promtool

RULES = PROMETHEUS / "rules.yml"
RULES_TEST = PROMETHEUS / "rules_test.yml"
PROMETHEUS_RULE = PROMETHEUS / "prometheusrule.yaml"
RECEIVER = ALERTMANAGER / "receiver-example.yml"
RUNBOOKS = Path(__file__).resolve().parents[2] / "docs" / "runbooks.md"
RUNBOOK_BASE = "https://triagebot.example.com/docs/runbooks.md#"

# The alerts triagebot is meant to receive, and the playbook each must map to.
WORKLOAD_ALERTS = {
    "GPUXidError": "gpu-xid",
    "GPUVanished": "gpu-xid",
    "GPUDoubleBitECCError": "gpu-xid",
    "GPURowRemapFailed": "gpu-xid",
    "GPURowRemapPending": "gpu-xid",
    "GPUTemperatureHigh": "gpu-xid",
    "KubePodOOMKilled": "oom-killed",
    "KubePodPending": "pending",
    "HighLatency": "latency",
    "TrainingStalled": "nccl-hang",
    "NCCLJobStalled": "nccl-hang",
}
HEALTH_ALERTS = {"TriagebotDown", "TriagebotAbsent", "TriagebotOutboxBacklog", "TriagebotSlackErrors",
                 "TriagebotWebhookRejected", "TriagebotTriageFailures", "TriagebotTriageSlow"}


def _groups() -> dict[str, list[dict[str, Any]]]:
    doc = load_yaml(RULES)
    return {g["name"]: g["rules"] for g in doc["groups"]}


def _rules() -> list[dict[str, Any]]:
    """Every alerting rule; a name may have several (GPUXidError: one rule per severity)."""
    return [r for rules in _groups().values() for r in rules if "alert" in r]


def _alerts() -> dict[str, dict[str, Any]]:
    """The rules by alert name, for names with one rule."""
    return {r["alert"]: r for r in _rules()}


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, cwd=cwd)


# --- promtool ---------------------------------------------------------------------------------------

def test_promtool_check_rules() -> None:
    done = _run([promtool(), "check", "rules", str(RULES)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(_rules())} rules found" in done.stdout


def test_promtool_check_rules_on_the_prometheusrule_spec(tmp_path: Path) -> None:
    spec = load_yaml(PROMETHEUS_RULE)["spec"]
    path = tmp_path / "from-prometheusrule.yml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    done = _run([promtool(), "check", "rules", str(path)])
    assert done.returncode == 0, done.stdout + done.stderr


def test_promtool_test_rules() -> None:
    done = _run([promtool(), "test", "rules", RULES_TEST.name], cwd=PROMETHEUS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_every_alert_has_a_firing_and_a_quiet_unit_test() -> None:
    doc = load_yaml(RULES_TEST)
    assert doc["rule_files"] == [RULES.name]
    fires: set[str] = set()
    quiet: set[str] = set()
    for case in doc["tests"]:
        for check in case.get("alert_rule_test") or []:
            (fires if check.get("exp_alerts") else quiet).add(check["alertname"])
    alerts = set(_alerts())
    assert alerts - fires == set(), f"alerts no unit test makes fire: {sorted(alerts - fires)}"
    assert alerts - quiet == set(), f"alerts no unit test keeps quiet: {sorted(alerts - quiet)}"
    assert (fires | quiet) <= alerts, f"tests for alerts that do not exist: {sorted((fires | quiet) - alerts)}"


def test_firing_tests_check_every_label_and_annotation() -> None:
    """exp_alerts must spell out the rule's own labels and all of its annotations, rendered."""
    for case in load_yaml(RULES_TEST)["tests"]:
        for check in case.get("alert_rule_test") or []:
            rules = [r for r in _rules() if r["alert"] == check["alertname"]]
            for expected in check.get("exp_alerts") or []:
                labels = expected.get("exp_labels") or {}
                # The rule this alert came from: the one whose own labels (severity) the expectation spells out.
                [rule] = [r for r in rules if all(labels.get(k) == v for k, v in r.get("labels", {}).items())]
                annotations = expected.get("exp_annotations") or {}
                assert set(annotations) == set(rule.get("annotations", {})), check["alertname"]
                assert not any("{{" in v for v in annotations.values()), "expected annotations are rendered text"


# --- the two rule files, and what the rules say -------------------------------------------------------

def _generator() -> ModuleType:
    spec = spec_from_file_location("gen_prometheusrule", PROMETHEUS / "gen_prometheusrule.py")
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_prometheusrule_is_generated_from_rules_yml() -> None:
    render = _generator().render
    wanted = render(RULES.read_text(encoding="utf-8"))
    assert PROMETHEUS_RULE.read_text(encoding="utf-8") == wanted, (
        "prometheusrule.yaml is out of date: run python deploy/prometheus/gen_prometheusrule.py")


def test_the_two_rule_files_agree() -> None:
    rule = load_yaml(PROMETHEUS_RULE)
    assert rule["apiVersion"] == "monitoring.coreos.com/v1" and rule["kind"] == "PrometheusRule"
    assert rule["spec"]["groups"] == load_yaml(RULES)["groups"]


def test_prometheusrule_is_part_of_the_base() -> None:
    assert "../../prometheus" in load_yaml(BASE / "kustomization.yaml")["resources"]
    assert load_yaml(PROMETHEUS / "kustomization.yaml")["resources"] == [PROMETHEUS_RULE.name]


def test_the_alert_set_is_the_documented_one() -> None:
    groups = _groups()
    assert {r["alert"] for r in groups["triagebot.health"]} == HEALTH_ALERTS
    assert {r["alert"] for r in groups["triagebot.workloads"]} == set(WORKLOAD_ALERTS)
    names = [r["alert"] for r in _rules()]
    assert [n for n in set(names) if names.count(n) > 1] == ["GPUXidError"], "only GPUXidError splits by severity"


def test_every_alert_has_severity_summary_and_description() -> None:
    for rule in _rules():
        name = rule["alert"]
        assert rule["labels"]["severity"] in ("critical", "warning", "info"), name
        assert rule["annotations"].get("summary") and rule["annotations"].get("description"), name


@pytest.mark.parametrize("alert", sorted(WORKLOAD_ALERTS))
def test_workload_alerts_map_to_their_playbook(alert: str) -> None:
    assert symptom_for(alert, {}) == WORKLOAD_ALERTS[alert]


def test_the_workload_alerts_cover_every_symptom_the_issue_names() -> None:
    assert set(WORKLOAD_ALERTS.values()) >= {"gpu-xid", "oom-killed", "pending", "latency", "nccl-hang"}


@pytest.mark.parametrize("alert", sorted(HEALTH_ALERTS))
def test_health_alerts_map_to_no_playbook(alert: str) -> None:
    assert symptom_for(alert, {}) is None


def test_workload_alerts_keep_the_labels_the_bot_targets_by() -> None:
    """Aggregations keep namespace/pod (or service, or job_name): the bot resolves its target from them."""
    for name in WORKLOAD_ALERTS:
        expr = _alerts()[name]["expr"]
        for by in re.findall(r"\bby\s*\(([^)]*)\)", expr):
            kept = {label.strip() for label in by.split(",")}
            targets = {"pod", "service", "job_name"}
            # A GPU alert is about a node's GPU: it keeps dcgm-exporter's node label (Hostname) and the GPU.
            gpu = {"Hostname", "UUID"} <= kept
            assert gpu or ("namespace" in kept and kept & targets), f"{name} drops its target labels: {by}"


def test_the_stalled_job_alert_targets_the_job() -> None:
    """NCCLJobStalled's labels name the job, so the bot triages (and captures) all of its ranks."""
    from collectors.alert_target import target_for

    found = target_for({"alertname": "NCCLJobStalled", "namespace": "ml-training", "job_name": "llama-ft"})
    assert found.target.service == "job/llama-ft" and found.target.namespace == "ml-training"
    assert found.symptoms == ["nccl-hang"]


def test_health_rules_use_metrics_the_bot_exports() -> None:
    from bot.metrics import Metrics

    metrics = Metrics()
    metrics.triages.labels("alert", "ok").inc()
    metrics.triage_seconds.labels("alert").observe(1.0)
    metrics.slack_errors.labels("chat.postMessage", "x").inc()
    metrics.webhook_rejected.labels("auth").inc()
    exported = {line.split("{")[0].split(" ")[0] for line in metrics.exposition().decode().splitlines()
                if line and not line.startswith("#")}
    used: set[str] = set()
    for name in HEALTH_ALERTS:
        used |= set(re.findall(r"\btriagebot_\w+", _alerts()[name]["expr"]))
    assert used, "no triagebot metric found in the health rules"
    assert used <= exported, f"rules use metrics the bot does not export: {sorted(used - exported)}"


def test_health_rules_select_the_job_the_servicemonitor_produces() -> None:
    monitor = load_yaml(BASE / "servicemonitor.yaml")
    service = load_yaml(BASE / "service.yaml")
    job = service["metadata"]["labels"][monitor["spec"]["jobLabel"]]
    assert job == "triagebot"
    for name in ("TriagebotDown", "TriagebotAbsent"):
        assert f'job="{job}"' in _alerts()[name]["expr"]


# --- what the GPU rules page on, and their runbooks ---------------------------------------------------

def _xid_rules() -> dict[str, dict[str, Any]]:
    return {r["labels"]["severity"]: r for r in _rules() if r["alert"] == "GPUXidError"}


def _codes(expr: str) -> set[int]:
    return {int(c) for c in re.findall(r"DCGM_FI_DEV_XID_ERRORS\s*==\s*(\d+)", expr)}


def test_xid_rules_page_exactly_on_the_catalog_s_paging_codes() -> None:
    """The code list in rules.yml is the catalog's (collectors/catalogs/xid.yaml class + severity), not a copy
    kept by hand: when they differ this prints the list to paste."""
    rules = _xid_rules()
    assert set(rules) == {"critical", "warning"}
    wanted = set(paging_codes())
    terms = " or ".join(f"DCGM_FI_DEV_XID_ERRORS == {c}" for c in sorted(wanted))
    for severity, rule in rules.items():
        assert _codes(rule["expr"]) == wanted, f"GPUXidError ({severity}): the paging codes should be: {terms}"
    # Application Xids are never among them: one user's bad kernel warns, it does not page.
    assert not wanted & {13, 31, 43}
    assert {48, 79} <= wanted


def test_xid_rules_fire_on_a_change_never_on_the_sticky_value() -> None:
    for severity, rule in _xid_rules().items():
        assert re.search(r"changes\(DCGM_FI_DEV_XID_ERRORS\[\d+m\]\)\s*>\s*0", rule["expr"]), severity
        assert rule["for"] == "0m"
    # The warning is the complement of the page: every other new Xid, known to the catalog or not.
    assert "unless" in _xid_rules()["warning"]["expr"] and "unless" not in _xid_rules()["critical"]["expr"]


def test_gpu_rules_use_dcgm_exporter_field_names() -> None:
    """The DCGM fields the rules read, as dcgm-exporter names them (its etc/default-counters.csv at d5e5f510, and
    DCGM field 396 for the optional pending flag; docs/runbooks.md says which are off by default)."""
    known = {"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
             "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
             "DCGM_FI_DEV_ROW_REMAP_PENDING"}
    used = {m for r in _rules() for m in re.findall(r"\bDCGM_\w+", r["expr"])}
    assert used <= known, sorted(used - known)
    assert {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
            "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"} <= used
    runbooks = RUNBOOKS.read_text(encoding="utf-8")
    for off_by_default in ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ROW_REMAP_PENDING"):
        assert f"{off_by_default}, " in runbooks, f"docs/runbooks.md should show the counters line for {off_by_default}"


def _anchors(markdown: str) -> set[str]:
    """GitHub-style heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    found = set()
    for line in markdown.splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            found.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return found


def test_every_rule_has_a_runbook_url_whose_anchor_exists() -> None:
    anchors = _anchors(RUNBOOKS.read_text(encoding="utf-8"))
    for rule in _rules():
        url = rule["annotations"].get("runbook_url", "")
        assert url.startswith(RUNBOOK_BASE), f"{rule['alert']}: runbook_url {url!r}"
        anchor = url[len(RUNBOOK_BASE):]
        assert anchor == rule["alert"].lower(), f"{rule['alert']}: anchor {anchor!r}"
        assert anchor in anchors, f"{rule['alert']}: docs/runbooks.md has no section #{anchor}"


def test_the_runbook_page_has_no_section_for_an_alert_that_does_not_exist() -> None:
    text = RUNBOOKS.read_text(encoding="utf-8")
    sections = set(re.findall(r"^## (\w+)$", text, flags=re.M))
    assert sections == {r["alert"] for r in _rules()}


# --- Alertmanager -----------------------------------------------------------------------------------

def test_amtool_check_config() -> None:
    done = _run([amtool(), "check-config", str(RECEIVER)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def _receivers_for(labels: dict[str, str]) -> set[str]:
    argv = [amtool(), "config", "routes", "test", f"--config.file={RECEIVER}",
            *(f"{k}={v}" for k, v in labels.items())]
    done = _run(argv)
    assert done.returncode == 0, done.stdout + done.stderr
    return set(done.stdout.strip().split(","))


@pytest.mark.parametrize("alert", sorted(WORKLOAD_ALERTS))
def test_workload_alerts_reach_triagebot_and_people(alert: str) -> None:
    assert _receivers_for({"alertname": alert, "namespace": "ml-training"}) == {"triagebot", "default"}


@pytest.mark.parametrize("alert", sorted(HEALTH_ALERTS | {"Watchdog"}))
def test_health_alerts_never_reach_triagebot(alert: str) -> None:
    assert _receivers_for({"alertname": alert, "namespace": "triagebot"}) == {"default"}


# Which alerts reach triagebot (every mapped name, none of the rest): tests/deploy/test_alert_routes.py.


def test_receiver_points_at_the_bot_with_a_token_file() -> None:
    config = load_yaml(RECEIVER)
    [receiver] = [r for r in config["receivers"] if r["name"] == "triagebot"]
    [hook] = receiver["webhook_configs"]
    assert hook["url"] == "http://triagebot.triagebot.svc:8080/alertmanager"
    assert hook["send_resolved"] is True
    auth = hook["http_config"]["authorization"]
    assert auth.get("type", "Bearer") == "Bearer"
    assert auth["credentials_file"].startswith("/etc/alertmanager/secrets/triagebot-webhook/")
    assert "credentials" not in auth, "the token must come from a file, never inline"
