"""The terminal interview: the question, feedback, follow-ups, hints and the model answer, drawn with rich.

bot/cli/interview.py reads the answers and calls these; the exchange itself is drills.interview.
"""

from __future__ import annotations

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from bot.render.drills.grade import print_grade_details
from bot.render.sources import with_link
from drills.interview import InterviewSession, Step
from drills.questions import DIFFICULTIES, Question, QuestionBank


def question_list(bank: QuestionBank, topic: str | None, console: Console) -> None:
    """The bank's topics, or the questions of one (a topic the caller has checked)."""
    if topic is None:
        table = Table(title=f"Interview topics ({len(bank)} questions)")
        for col in ("topic", "questions", *DIFFICULTIES):
            table.add_column(col)
        for info in bank.topics():
            table.add_row(info.topic, str(info.count), *(str(info.difficulties[d]) for d in DIFFICULTIES))
    else:
        table = Table(title=f"Questions in {topic}", expand=True)
        for col in ("id", "difficulty", "kind", "question"):
            table.add_column(col, overflow="fold")
        for q in bank.select(topic=topic):
            table.add_row(q.id, q.difficulty, q.kind, Text(q.question))
    console.print(table)


def render(steps: list[Step], question: Question, session: InterviewSession, console: Console) -> None:
    for step in steps:
        if step.kind == "question":
            title = f"{question.topic} · {question.difficulty} · {question.kind}"
            console.print(Panel(Text(step.text), title=title, subtitle=question.id, expand=True))
            console.print(Text("Answer in your own words; an empty line ends the answer. "
                               "Commands: hint, skip, quit.", style="dim"))
        elif step.kind == "feedback" and step.grade is not None:
            so_far = " so far" if session.follow_ups_asked and session.turns[-1].kind == "follow-up" else ""
            console.print(Text(f"Coverage{so_far} {step.grade.score}/100: {step.grade.verdict}", style="bold"))
            if step.newly_covered:
                added = [p.point for p in question.expected_points if p.id in step.newly_covered]
                console.print(Text("Your follow-up answer added:\n" + "\n".join(f"  + {a}" for a in added),
                                   style="green"))
            print_grade_details(step.grade, console)
        elif step.kind == "exact":
            n, of = step.position or (1, 1)
            console.print(Panel(Text(step.text), title=f"Exact follow-up {n}/{of} (from the playbook)", expand=True))
        elif step.kind == "exact-result":
            console.print(Text(step.text, style="bold"))
        elif step.kind == "follow-up":
            n, of = step.position or (1, 1)
            console.print(Panel(Text(step.text), title=f"Follow-up {n}/{of}", expand=True))
        elif step.kind == "hint":
            n, of = step.position or (1, 1)
            console.print(Text(f"Hint {n}/{of}: {step.text}", style="yellow"))
        elif step.kind == "model-answer":
            _model_answer(step, question, session, console)
        else:
            console.print(Text(step.text, style="dim"))


def _exact_line(session: InterviewSession, step: Step) -> str:
    scores = ", ".join(f"{v}/100" for v in session.exact_scores)
    return f"Exact follow-ups {scores}; score {step.score}/100 (they count for a quarter)"


def _model_answer(step: Step, question: Question, session: InterviewSession, console: Console) -> None:
    console.print(Panel(Text(step.text), title="Model answer", expand=True))
    g = step.grade
    if g is None:
        console.print(Text("Not answered.", style="dim"))
    else:
        console.print(Text(f"Overall coverage {g.score}/100 ({g.verdict}); hints used "
                           f"{session.hints_used}/{len(question.hints)}", style="bold"))
        if session.exact_scores:
            console.print(Text(_exact_line(session, step), style="bold"))
        if g.missed:
            console.print(Text("Still missing:\n" + "\n".join(f"  - {p.point}" for p in g.missed), style="yellow"))
    console.print(Text("Source: " + "; ".join(with_link(ref) for ref in question.source), style="dim"), soft_wrap=True)
    if question.related_playbook:
        console.print(Text(f"Related playbook: triagebot playbooks show {question.related_playbook}", style="dim"))
