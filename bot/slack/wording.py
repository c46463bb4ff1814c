"""The words the Slack app says besides the report: operator-overridable templates, and /triage's help.

An operator overrides any template by putting a file of the same name into `templates_dir`, next to the report's
templates.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, DictLoader, FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from bot.context import BotContext
from bot.render.slack import mrkdwn_escape

DEFAULT_TEMPLATES = {
    "help.md.j2": """\
*/triage*: evidence-first triage of a service, pod, node or job
• `/triage <service> [namespace] [since]`, e.g. `/triage checkout shop 2h`. The namespace defaults to \
`default`, the window to `{{ default_since }}` (at most 7d); `-n NAMESPACE` and `--since 2h` work too.
• `/triage pod/NAME`, `node/NAME` or `job/NAME`: one object directly.
• `/triage` followed by pasted evidence (kubectl describe, events, dmesg, kubelet or NCCL logs, Prometheus \
output): analysed as pasted, without touching the cluster.
• The message shortcut *Triage this message* does the same for evidence someone already posted.
The report arrives in a thread: the leading hypotheses with their evidence, what would falsify the leader, next \
checks, mitigations, what evidence was missing, a chart and the raw evidence as a file. Its buttons: Show \
evidence, Re-run, Mark resolved, Wrong diagnosis, Save as drill.
• `/triage postmortem [INCIDENT]`: a postmortem draft (markdown) of an incident, by default this channel's latest \
resolved one, as a file in its thread; the note that says an incident was resolved has a button for it too.
• `/triage digest on|off`: the weekly digest in this channel, every Monday, for the week before.
{% if namespaces %}Namespaces you may triage here: {{ namespaces|join(", ") }}.\
{% else %}Nothing is granted to this channel or to you yet: ask an admin to add it under `permissions`.{% endif %}""",
    "triaging.md.j2": ":hourglass_flowing_sand: Triaging *{{ label|mrkdwn }}* in `{{ namespace }}` (last "
                      "{{ since }}) for <@{{ user }}>. The report follows in this thread.",
    "triaged.md.j2": ":mag: Triaged *{{ label|mrkdwn }}* in `{{ namespace }}` (last {{ since }}) for <@{{ user }}>. "
                     "The report is in this thread.",
    "ended.md.j2": ":grey_question: The triage of *{{ label|mrkdwn }}* in `{{ namespace }}` (last {{ since }}) for "
                   "<@{{ user }}> ended without a report.",
    "pasted.md.j2": ":hourglass_flowing_sand: Analysing evidence {% if link %}from <{{ link }}|a message>, for"
                    "{% else %}pasted by{% endif %} <@{{ user }}> ({{ kinds|join(', ') }}). The report follows in "
                    "this thread.",
    "analysed.md.j2": ":mag: Analysed evidence {% if link %}from <{{ link }}|a message>, for"
                      "{% else %}pasted by{% endif %} <@{{ user }}> ({{ kinds|join(', ') }}). The report is in "
                      "this thread.",
    "rerun.md.j2": ":repeat: <@{{ user }}> asked for a re-run of triage run {{ run_id }}{% if live %} (live, "
                   "last {{ since }}){% else %} (the same evidence, current playbooks){% endif %}.",
    "resolved.md.j2": ":white_check_mark: Marked resolved by <@{{ user }}>.",
    "feedback.md.j2": ":memo: <@{{ user }}> says the diagnosis of run {{ run_id }} was wrong{% if right %}; the right "
                      "hypothesis: *{{ right|mrkdwn }}*{% endif %}.{% if note %}\n> {{ note|mrkdwn }}{% endif %}",
    "drill.md.j2": ":floppy_disk: <@{{ user }}> saved run {{ run_id }} as a drill: `{{ folder|mrkdwn }}`"
                   "{% if truth %} (ground truth {{ truth|mrkdwn }}). Drill it with `/drill start {{ id }}` or "
                   "`triagebot drill {{ id }}`{% else %} (no ground truth yet: mark a wrong diagnosis first, or "
                   "edit incident.yaml; until then it cannot be drilled){% endif %}. Replay it with "
                   "`triagebot replay {{ folder|mrkdwn }}`.",
    "home_incident.md.j2": "{{ icon }} *{{ title|mrkdwn }}* · {{ status }}\n{{ source }}"
                           "{% if namespace %} · `{{ namespace }}`{% endif %}"
                           "{% if channel %} · <#{{ channel }}>{% endif %}"
                           " · <!date^{{ epoch }}^{date_short_pretty} {time}|{{ when }}>"
                           "{% if leader %}\nLeading: {{ leader|mrkdwn }}{% endif %}",
    "home_empty.md.j2": "No incidents yet. Try `/triage help` in a channel.",
}


class Wording:
    """The message templates: the operator's folder first, then the defaults above."""

    def __init__(self, templates_dir: Path | None = None) -> None:
        loaders: list[Any] = [DictLoader(DEFAULT_TEMPLATES)]
        if templates_dir is not None:
            loaders.insert(0, FileSystemLoader(str(templates_dir)))
        # Sandboxed: templates are operator-supplied files, and the values they see come from Slack users.
        self.env = SandboxedEnvironment(loader=ChoiceLoader(loaders), undefined=StrictUndefined, autoescape=False)
        self.env.filters["mrkdwn"] = mrkdwn_escape

    def render(self, name: str, **variables: Any) -> str:
        return self.env.get_template(f"{name}.md.j2").render(**variables).strip()


@functools.lru_cache(maxsize=8)
def wording_for(templates_dir: Path | None) -> Wording:
    """One Wording per templates folder, kept: a new one compiles its templates again, CPU that every command would
    spend in the process that acks Slack. Jinja still reloads a template whose file changed."""
    return Wording(templates_dir)



def granted_namespaces(ctx: BotContext, *, channel: str, user: str) -> list[str]:
    perms = ctx.settings.permissions
    return sorted(set(perms.channels.get(channel, []) + perms.users.get(user, [])))


def help_text(ctx: BotContext, *, channel: str, user: str) -> str:
    return wording_for(ctx.settings.templates_dir).render(
        "help", default_since=ctx.settings.default_since,
        namespaces=granted_namespaces(ctx, channel=channel, user=user))

