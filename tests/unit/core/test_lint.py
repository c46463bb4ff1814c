"""Lint and loading: a broken playbook is reported with file:line and refused by the engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from playbooks.loader import PlaybookError, check_file, load_playbooks

GOOD_HYPOTHESIS = """
  - id: limit-too-low
    claim: "{{ pod }} hit its limit"
    likely: 'container.last_terminated.reason == "OOMKilled"'
    falsified_by: working set below the limit
    source: ["seed 004:1371"]
"""


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
        (header() + GOOD_HYPOTHESIS + GOOD_HYPOTHESIS, 13, "duplicate hypothesis id"),
        (header() + GOOD_HYPOTHESIS.replace("id: limit-too-low", "id: Limit_Too_Low"), 7, "pattern"),
        (header() + GOOD_HYPOTHESIS + "    cite: [pod.nope]\n", 12, "unknown fact 'pod.nope' in cite"),
        (header() + GOOD_HYPOTHESIS.replace("{{ pod }}", "{{ pod "), 7, "template error"),
        (header() + GOOD_HYPOTHESIS.replace("{{ pod }}", "{{ pod | shellquote }}"), 7, "no filter named 'shellquote'"),
        ("id: oom-killed\ntitle: [unclosed\n", 3, "YAML syntax"),
        # Charts (issue #13, point 8): a series live triage fetches, a known threshold fact, a labelled line.
        (header() + GOOD_HYPOTHESIS + "    chart: {metric: http_requests_total, title: t, unit: count}\n", 12,
         "http_requests_total is not fetched as a range query"),
        (header() + GOOD_HYPOTHESIS + "    chart: {metric: container_memory_working_set_bytes, title: t, unit: bytes,"
         " threshold_fact: container.nope, threshold_label: limit}\n", 12, "unknown fact 'container.nope'"),
        (header() + GOOD_HYPOTHESIS + "    chart: {metric: container_cpu_cfs_throttled_periods_total, title: t,"
         " unit: ratio, threshold: 25}\n", 12, "a ratio threshold lies in [0, 1]"),
        (header() + GOOD_HYPOTHESIS + "    chart: {metric: container_cpu_cfs_throttled_periods_total, title: t,"
         " unit: ratio, threshold: 0.25}\n", 12, "a threshold needs threshold_label"),
        (header() + GOOD_HYPOTHESIS + "    chart: {metric: DCGM_FI_DEV_XID_ERRORS, title: t, unit: furlongs}\n", 12,
         "unit"),
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
        "        likely: 'true'\n        falsified_by: f\n        source: [s]\n",
    )
    _, problems = check_file(write(tmp_path, body))
    assert [p.message for p in problems if "'child' is unreachable" in p.message]


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
