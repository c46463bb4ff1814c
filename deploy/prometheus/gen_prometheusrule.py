"""Write prometheusrule.yaml (a Prometheus Operator PrometheusRule) from rules.yml, the one source of the rules.

    python deploy/prometheus/gen_prometheusrule.py           # rewrite prometheusrule.yaml
    python deploy/prometheus/gen_prometheusrule.py --check   # exit 1 if it is out of date

tests/deploy/test_rules.py runs the same check.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
RULES = HERE / "rules.yml"
OUTPUT = HERE / "prometheusrule.yaml"

HEADER = """\
# GENERATED from rules.yml by gen_prometheusrule.py: edit rules.yml, then run
#   python deploy/prometheus/gen_prometheusrule.py
# kube-prometheus-stack selects rules by label: add `release: <your release>` under metadata.labels (or set
# ruleSelectorNilUsesHelmValues=false) so its Prometheus loads these.
"""


class _Dumper(yaml.SafeDumper):
    """Block style for multi-line strings (the PromQL stays readable), and indented lists."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def render(rules_text: str) -> str:
    """The PrometheusRule text for the given rules file text."""
    rules = yaml.safe_load(rules_text)
    doc: dict[str, Any] = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": "triagebot",
            "labels": {"app.kubernetes.io/name": "triagebot", "app.kubernetes.io/component": "alert-rules"},
        },
        "spec": {"groups": rules["groups"]},
    }
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=4096, allow_unicode=True)
    return HEADER + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report whether the file is up to date")
    args = parser.parse_args(argv)
    wanted = render(RULES.read_text(encoding="utf-8"))
    current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
    if args.check:
        if current != wanted:
            print(f"{OUTPUT} is out of date: run python {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    if current != wanted:
        OUTPUT.write_text(wanted, encoding="utf-8")
        print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
