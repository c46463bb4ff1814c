"""Flags shared by the commands that print a report. Only argparse here: building the parser must stay cheap."""

from __future__ import annotations

import argparse

FORMATS = ("text", "json", "markdown")


def add_explain_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--explain", action="store_true",
                        help="show how each status was decided: the rule (file:line, CEL) and what read each fact")


def add_summary_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--summary", action="store_true",
                        help="add a short narrative: the configured model's (checked), else the rules'")


def add_redact_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-redact", action="store_true",
                        help="print secrets found in the evidence as they are (local use only; redacted by default)")




def add_recall_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--recall", action="store_true",
                        help="also say which incidents in the bot's database (TRIAGEBOT_DATABASE_URL, read only) "
                             "of the last `recurrence_days` share this one's node, GPU, image, workload or verdict")
