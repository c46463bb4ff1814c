"""The arguments of the commands whose code is heavy (drills, interviews, evaluation, ask). Only argparse and
constants here: every run builds the whole parser, and must not import those commands to do it."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.cli.flags import FORMATS
from drills.levels import DIFFICULTIES

DEFAULT_CHANNEL = "terminal"  # the leaderboard of drills run in the terminal
MAX_TOP_K = 20


def add_interview_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topic", nargs="?", metavar="TOPIC|grade",
                        help="pick from this topic (see --list); `grade` grades one answer non-interactively")
    parser.add_argument("--difficulty", choices=DIFFICULTIES)
    parser.add_argument("--id", dest="question_id", metavar="ID", help="ask this question")
    parser.add_argument("--list", action="store_true", help="list topics, or the questions of TOPIC")
    parser.add_argument("--seed", type=int, help="repeatable random pick")
    parser.add_argument("--follow-ups", type=int, default=1, metavar="N", help="follow-up questions to ask")
    parser.add_argument("--answer-file", metavar="FILE", help="with `grade`: the answer to grade (- reads stdin)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="with `grade`: output format")


def add_drill_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("incident", nargs="?", metavar="ID|random|list|history|leaderboard|save",
                        help="an incident id or `random` (default) to drill; `list` the incidents (bundled and "
                             "saved); `history` or `leaderboard` to look back; `save INCIDENT` to make a drill of an "
                             "incident stored by the bot")
    parser.add_argument("stored", nargs="?", metavar="INCIDENT",
                        help="with `save`: a stored incident's id or key (from TRIAGEBOT_DATABASE_URL)")
    parser.add_argument("-o", "--output", type=Path, metavar="DIR",
                        help="with `save`: a new folder, whose name is the drill's id (default: "
                             "<drills_dir>/incident-<id>; only the drills dir is drilled from)")
    parser.add_argument("--ground-truth", metavar="PLAYBOOK/HYPOTHESIS",
                        help="with `save`: the real cause (default: from the latest feedback on the incident)")
    parser.add_argument("--force", action="store_true",
                        help="with `save`: replace a drill saved in that folder before (e.g. to add --ground-truth)")
    parser.add_argument("--difficulty", choices=DIFFICULTIES, help="pick among incidents of this difficulty")
    parser.add_argument("--tag", help="pick among incidents with this tag")
    parser.add_argument("--resume", metavar="SESSION", help="continue a saved drill")
    parser.add_argument("--trainee", metavar="NAME", help="who is drilling (default: your login name)")
    parser.add_argument("--channel", metavar="NAME", help=f"leaderboard channel (default: {DEFAULT_CHANNEL})")
    parser.add_argument("--seed", type=int, help="repeatable random pick")
    parser.add_argument("--db", metavar="FILE", type=Path,
                        help="SQLite file for sessions (default: $TRIAGEBOT_STATE_DIR/drills.sqlite)")
    parser.add_argument("--chart", metavar="PNG", type=Path,
                        help="after the debrief, write the leading hypothesis's chart (as live triage posts it) here")


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("root", metavar="DIR", nargs="?",
                        help="a folder of cases (each a folder with case.yaml and evidence.txt)")
    parser.add_argument("--production", action="store_true",
                        help="instead of DIR: accuracy from on-call feedback in the bot's database "
                             "(TRIAGEBOT_DATABASE_URL), by playbook and hypothesis, with the confusions")
    parser.add_argument("--since", metavar="AGE", default="30d",
                        help="with --production: how far back, e.g. 30d, 12h, 2w (default 30d)")
    parser.add_argument("--export", metavar="DIR",
                        help="with --production: write each labelled incident as a candidate regression case "
                             "(tests/realworld layout: evidence.txt and case.yaml, the label as leader) under DIR, "
                             "for `triagebot eval DIR`")
    parser.add_argument("--write", metavar="FILE", help="also write the accuracy table as markdown (docs/accuracy.md)")
    parser.add_argument("--quiet", action="store_true", help="only the table, not each failing case")
    parser.add_argument("--first-sight", metavar="BATCH",
                        help="score DIR as a new batch of unseen cases, once, and append it to the first-sight ledger")
    parser.add_argument("--collected-by", metavar="WHO", help="with --first-sight: who collected and labelled it")
    parser.add_argument("--ledger", metavar="FILE",
                        help="the first-sight ledger (default: the project's, tests/realworld/first-sight.yaml)")


def add_ask_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("question", nargs="+", metavar="QUESTION", help="the question; quoting it is optional")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("-k", "--top-k", type=int, dest="top_k", metavar="N",
                        help=f"passages to show and answer from, 1-{MAX_TOP_K} (default: setting ask_top_k, 4)")
    parser.add_argument("--no-model", action="store_true", help="only search, even when a model is configured")
