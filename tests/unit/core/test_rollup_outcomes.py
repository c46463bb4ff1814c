"""The roll-up's outcomes message: each reason once, most common first, with the groups it ended (issue 31, 7)."""

from __future__ import annotations

from bot.render.rollup import GROUPS_SHOWN, group_name, outcomes_text


def test_each_reason_once_with_its_groups_most_common_first() -> None:
    text = outcomes_text({'namespace "ml" not found': ["B", "A", "C"], 'pod "x" not found in namespace "shop"': ["D"]})
    assert text.splitlines() == [
        ":mag: *4 triages in this storm ended without a verdict*, by reason:",
        '• namespace "ml" not found — 3 groups: A, B, C',
        '• pod "x" not found in namespace "shop" — 1 group: D',
    ]


def test_a_group_is_named_by_its_alerts_and_grouping_labels() -> None:
    assert group_name(["KubeQuotaFullyUsed"], {"alertname": "KubeQuotaFullyUsed", "resourcequota": "gpu"}) == \
        "KubeQuotaFullyUsed (resourcequota=gpu)"
    assert group_name(["A", "B"], {}) == "A/B"


def test_a_long_list_is_cut_and_counted_and_names_are_escaped() -> None:
    groups = [f"g{n:03d}" for n in range(GROUPS_SHOWN + 7)] + ["<!channel>"]
    line = outcomes_text({"gone": groups}).splitlines()[1]
    assert line.endswith(" and 8 more") and f"{len(groups)} groups" in line
    assert "<!channel>" not in line and "&lt;!channel&gt;" in line
