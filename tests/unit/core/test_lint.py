"""Lint and loading: a broken playbook is reported with file:line and refused by the engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from playbooks.loader import PlaybookError, check_file, load_playbooks
from playbooks.model import NoChart

CHARTLESS = """
  - id: limit-too-low
    claim: "{{ pod }} hit its limit"
    likely: 'container.last_terminated.reason == "OOMKilled"'
    discriminating: [container.last_terminated.reason]
    falsified_by: working set below the limit
    source: ["seed 004:1371"]
"""
GOOD_HYPOTHESIS = CHARTLESS + "    chart: {metric: container_memory_working_set_bytes, title: ws, unit: bytes}\n"


def write(tmp_path: Path, body: str, name: str = "oom-killed") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def header(trigger: str = "kernel.oom_kill") -> str:
    return f"id: oom-killed\ntitle: t\ntrigger: '{trigger}'\nsources: [kernel-log]\nhypotheses:\n"


@pytest.mark.parametrize(
    ("body", "line", "needle"),
    [
        (header() + GOOD_HYPOTHESIS.replace("likely: 'container", "likely: 'contaner"), 9, "unknown fact"),
        (header("kernel.oom_kill &&") + GOOD_HYPOTHESIS, 3, "CEL"),
        (header() + GOOD_HYPOTHESIS.replace("    likely:", "    # no predicate\n    x_likely:"), 10,
         "x_likely"),
        (header() + GOOD_HYPOTHESIS.replace("    likely: 'container.last_terminated.reason == \"OOMKilled\"'\n", ""),
         7, "unreachable"),
        (header() + GOOD_HYPOTHESIS + GOOD_HYPOTHESIS, 15, "duplicate hypothesis id"),
        (header() + GOOD_HYPOTHESIS.replace("id: limit-too-low", "id: Limit_Too_Low"), 7, "pattern"),
        (header() + GOOD_HYPOTHESIS + "    cite: [pod.nope]\n", 14, "unknown fact 'pod.nope' in cite"),
        (header() + GOOD_HYPOTHESIS.replace("{{ pod }}", "{{ pod "), 7, "template error"),
        (header() + GOOD_HYPOTHESIS.replace("{{ pod }}", "{{ pod | shellquote }}"), 7, "no filter named 'shellquote'"),
        ("id: oom-killed\ntitle: [unclosed\n", 3, "YAML syntax"),
        # Charts (issue #13, point 8): a series live triage fetches, a known threshold fact, a labelled line.
        (header() + CHARTLESS + "    chart: {metric: http_requests_total, title: t, unit: count}\n", 13,
         "http_requests_total is not fetched as a range query"),
        (header() + CHARTLESS + "    chart: {metric: container_memory_working_set_bytes, title: t, unit: bytes,"
         " threshold_fact: container.nope, threshold_label: limit}\n", 13, "unknown fact 'container.nope'"),
        (header() + CHARTLESS + "    chart: {metric: container_cpu_cfs_throttled_periods_total, title: t,"
         " unit: ratio, threshold: 25}\n", 13, "a ratio threshold lies in [0, 1]"),
        (header() + CHARTLESS + "    chart: {metric: container_cpu_cfs_throttled_periods_total, title: t,"
         " unit: ratio, threshold: 0.25}\n", 13, "a threshold needs threshold_label"),
        (header() + CHARTLESS + "    chart: {metric: DCGM_FI_DEV_XID_ERRORS, title: t, unit: furlongs}\n", 13,
         "chart.unit: Input should be"),
        # Every hypothesis declares its chart, a series or why there is none.
        (header() + CHARTLESS, 7, "hypothesis 'limit-too-low' declares no chart: add `chart:`"),
        (header() + CHARTLESS + "    chart: {none: too short}\n", 13, "chart.none: String should have at least"),
        (header() + CHARTLESS + "    chart: {none: 'no series shows a typo in a tag', metric: DCGM_FI_DEV_GPU_UTIL}\n",
         13, "chart.metric: Extra inputs are not permitted"),
        # The unit is the one the series' range query returns: a counter's rate is not a count, a ratio not bytes.
        (header() + CHARTLESS + "    chart: {metric: container_memory_working_set_bytes, title: t, unit: ratio}\n",
         13, "unit 'ratio', but the range query memory-working-set-range returns 'bytes'"),
        (header() + CHARTLESS + "    chart: {metric: kube_pod_container_status_restarts_total, title: t,"
         " unit: count}\n", 13, "unit 'count', but the range query restarts-range returns 'per-hour'"),
        # A matcher names one of a metric's charts; one the catalog does not hold is not fetched.
        (header() + CHARTLESS + "    chart: {metric: 'node_cpu_seconds_total{mode=\"idle\"}', title: t, unit: ratio}\n",
         13, 'node_cpu_seconds_total{mode="idle"} is not fetched as a range query'),
        (header() + CHARTLESS + "    chart: {metric: DCGM_FI_DEV_GPU_UTIL, title: t, unit: percent, threshold: 140,"
         " threshold_label: l}\n", 13, "a percent threshold lies in [0, 100]"),
        (header() + CHARTLESS + "    chart: {metric: DCGM_FI_PROF_SM_ACTIVE, title: t, unit: ratio, breach: below}\n",
         13, "breach: below needs a threshold"),
    ],
)
def test_lint_reports_file_and_line(tmp_path: Path, body: str, line: int, needle: str) -> None:
    path = write(tmp_path, body)
    compiled, problems = check_file(path)
    assert compiled is None
    assert any(p.line == line and needle in p.message and p.file == str(path) for p in problems), problems


def test_unreachable_parent_makes_children_unreachable(tmp_path: Path) -> None:
    body = header() + GOOD_HYPOTHESIS.replace(
        "    likely: 'container.last_terminated.reason == \"OOMKilled\"'\n",
        "    rule_out: 'eviction.seen'\n    children:\n      - id: child\n        claim: c\n"
        "        likely: 'true'\n        falsified_by: f\n        source: [s]\n"
        "        chart: {none: a child that no metric can show}\n",
    )
    _, problems = check_file(write(tmp_path, body))
    assert [p.message for p in problems if "'child' is unreachable" in p.message]


def test_a_child_without_a_chart_is_named_at_its_line(tmp_path: Path) -> None:
    body = header() + GOOD_HYPOTHESIS + (
        "    children:\n      - id: child-without-chart\n        claim: c\n        confirm: 'true'\n"
        "        falsified_by: f\n        source: [s]\n")
    path = write(tmp_path, body)
    compiled, problems = check_file(path)
    assert compiled is None
    assert [(p.line, p.message.split(":")[0]) for p in problems] == [
        (15, "hypothesis 'child-without-chart' declares no chart")]
    assert str(problems[0]).startswith(f"{path}:15: error: hypothesis 'child-without-chart' declares no chart")


def test_every_bundled_hypothesis_declares_a_series_or_why_none() -> None:
    """The bundled playbooks chart every hypothesis; `none` stays rare and says why in a sentence."""
    charts = [h.chart for book in load_playbooks() for h, _ in book.spec.walk()]
    assert len(charts) >= 112
    nones = [c for c in charts if isinstance(c, NoChart)]
    assert len(nones) <= len(charts) // 10
    assert all(c.none.rstrip().endswith(".") for c in nones)


def test_id_must_match_file_and_symptom(tmp_path: Path) -> None:
    _, problems = check_file(write(tmp_path, header() + GOOD_HYPOTHESIS, name="oom"))
    messages = [p.message for p in problems]
    assert any("does not match file name 'oom'" in m for m in messages)


def test_clean_playbook_compiles(tmp_path: Path) -> None:
    compiled, problems = check_file(write(tmp_path, header() + GOOD_HYPOTHESIS))
    assert problems == []
    assert compiled is not None and compiled.hypotheses[0].spec.id == "limit-too-low"


def test_engine_refuses_a_folder_with_a_broken_playbook(tmp_path: Path) -> None:
    write(tmp_path, header("kernel.oom_kill ||") + GOOD_HYPOTHESIS)
    with pytest.raises(PlaybookError, match=r"oom-killed.yaml:3: error: CEL"):
        load_playbooks(tmp_path)


def test_bundled_playbooks_are_clean() -> None:
    books = load_playbooks()
    assert {b.spec.id for b in books} >= {"oom-killed", "pending", "latency", "nccl-hang"}


def test_comprehension_variables_are_not_fact_names() -> None:
    from playbooks.cel_expr import referenced_names

    known, unknown = referenced_names(
        'node.taints.exists(t, t.startsWith("gpu")) && xid.codes.all(c, c > 0) && contaner.name == "x"')
    assert known == ["node.taints", "xid.codes"]
    assert unknown == ["contaner.name"]
