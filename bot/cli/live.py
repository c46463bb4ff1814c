"""`triagebot triage` and `triagebot record`: live evidence from a cluster."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.errors import LiveUsageError
from bot.cli.flags import FORMATS, add_explain_flag, add_recall_flag

if TYPE_CHECKING:
    from bot.runner.triage import Triage
    from collectors.models import Target

CLUSTER_UNREACHABLE = 3  # exit code of `triage` and `record` when the Kubernetes API did not answer at all


class ClusterUnreachable(Exception):
    """Not a user mistake: the API server could not be reached. The CLI prints it in one line and exits 3."""

    def __init__(self, message: str, triage: Triage) -> None:
        super().__init__(message)
        self.triage = triage


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    for name, helptext in (("triage", "triage a service, pod/NAME, node/NAME or job/NAME in a live cluster"),
                           ("record", "save a live triage's evidence as a recorded incident")):
        p = sub.add_parser(name, help=helptext, epilog=EXIT_CODES)
        p.add_argument("target", metavar="SERVICE", help="SERVICE, pod/NAME, node/NAME or job/NAME")
        p.add_argument("-n", "--namespace", default="default")
        p.add_argument("--context", help="kubeconfig context (default: TRIAGEBOT_CONTEXT or the current one)")
        p.add_argument("--kubeconfig", type=Path, help="kubeconfig file (default: TRIAGEBOT_KUBECONFIG)")
        p.add_argument("--since", help="how far back to look, e.g. 30m, 2h (default: TRIAGEBOT_DEFAULT_SINCE)")
        if name == "triage":
            p.add_argument("--format", choices=FORMATS, default="text")
            p.add_argument("--summary", action="store_true",
                           help="add a short narrative: the configured model's (checked), else the rules'")
            add_explain_flag(p)
            add_recall_flag(p)
        else:
            p.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="a new folder")
            p.add_argument("--page", help="the alert or complaint that started this, for drills")


EXIT_CODES = ("exit codes: 0 the triage ran; 2 a mistake in the command or settings (one line on stderr); "
              f"{CLUSTER_UNREACHABLE} the cluster could not be reached (the Kubernetes API did not answer GET "
              "/version): the report, if printed, holds no cluster evidence")


def add_serve_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("serve", help="serve /slack/events, /alertmanager, /metrics, /healthz and /readyz")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=8080)


def cmd_serve(args: argparse.Namespace) -> int:
    from bot.config import ConfigError, load_settings
    from bot.serve import serve

    try:
        serve(load_settings(), args.host, args.port)
    except ConfigError as err:
        raise LiveUsageError(str(err)) from None
    return 0


def add_agent_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("agent", help="run the read-only node agent (settings from TRIAGEBOT_AGENT_*)")
    p.add_argument("--host", help="listen address (default TRIAGEBOT_AGENT_HOST)")
    p.add_argument("--port", type=int, help="listen port (default TRIAGEBOT_AGENT_PORT, 9105)")


def cmd_agent(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from collectors.agent.config import AgentSettings
    from collectors.agent.server import serve

    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    try:
        settings = AgentSettings(**overrides)
    except ValidationError as err:
        first = err.errors()[0]
        name = ".".join(str(p) for p in first["loc"])
        raise LiveUsageError(f"setting {name} (TRIAGEBOT_AGENT_{name.upper()}): {first['msg']}") from None
    from collectors.jsonlog import LogLevelError, level_from_env

    try:
        level_from_env()  # checked before serving: a bad TRIAGEBOT_LOG_LEVEL is a one-line error, not a traceback
    except LogLevelError as err:
        raise LiveUsageError(str(err)) from None
    serve(settings)
    return 0


def _target(args: argparse.Namespace) -> Target:
    from collectors.models import Target
    from collectors.validate import namespace, target_name

    kind, name = target_name(args.target)
    ns = namespace(args.namespace)
    if kind == "pod":
        return Target(namespace=ns, pod=name, service=args.target)
    if kind == "node":
        return Target(namespace=ns, node=name, service=args.target)
    return Target(namespace=ns, service=name if kind == "service" else f"{kind}/{name}")


def _run(args: argparse.Namespace) -> Triage:
    # Imported here: pydantic-settings costs ~0.1 s at start, which `analyze` should not pay.
    from bot.config import ConfigError, load_settings
    from collectors.live.base import TargetNotFound
    from collectors.validate import InvalidInput, duration

    overrides = {k: v for k, v in (("context", args.context), ("kubeconfig", args.kubeconfig)) if v is not None}
    try:
        target = _target(args)
        settings = load_settings(**overrides)
        since = duration(args.since or settings.default_since)
        target.cluster = settings.cluster_name or settings.context
        # Imported here: the Kubernetes client costs ~0.4 s to import, which `analyze` should not pay.
        from bot.runner.kubeconfig import unreachable
        from bot.runner.triage import access_from, kube_client, run_triage

        kube = kube_client(settings)
        triage = run_triage(target, since, access_from(settings, kube))
    except (InvalidInput, ConfigError, TargetNotFound) as err:
        raise LiveUsageError(str(err).strip('"')) from None
    # Asked only when no Kubernetes source gave anything: a triage that read the cluster reached it.
    if not any(a.source.startswith("kubernetes") and a.unavailable is None for a in triage.collected.result.artifacts):
        why = unreachable(kube, settings.call_timeout)
        if why is not None:
            raise ClusterUnreachable(f"could not reach the cluster at {why}", triage)
    return triage


def cmd_triage(args: argparse.Namespace) -> int:
    from bot.cli.report_output import emit

    try:
        triage = _run(args)
    except ClusterUnreachable as err:
        # The report still shows what other sources (Prometheus, agents) said and what is missing; the exit code
        # and the last line say that the cluster itself was not read.
        emit(err.triage.report, args.format, summary=args.summary, explain=getattr(args, "explain", False),
             recall=getattr(args, "recall", False))
        sys.stderr.write(f"triagebot: error: {err}\n")
        return CLUSTER_UNREACHABLE
    emit(triage.report, args.format, summary=args.summary, explain=getattr(args, "explain", False),
             recall=getattr(args, "recall", False))
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    from drills.recorded.record import RecordError, write_incident

    try:
        triage = _run(args)
    except ClusterUnreachable as err:
        sys.stderr.write(f"triagebot: error: {err}; nothing recorded\n")
        return CLUSTER_UNREACHABLE
    page = args.page or f"triagebot record {args.target} -n {args.namespace}"
    try:
        folder = write_incident(args.output, triage.collected.result.artifacts, triage.target, triage.captured_at,
                                page=page, title=f"Recorded triage of {args.target} in {args.namespace}",
                                missing=triage.report.missing)
    except (RecordError, OSError) as err:
        raise LiveUsageError(str(err)) from None
    lead = triage.report.leading()
    summary = f"{lead[0].playbook}/{lead[1].id} ({lead[1].status})" if lead else "no hypothesis holds"
    sys.stdout.write(f"recorded {len(triage.collected.result.artifacts)} artifacts to {folder}; "
                     f"leading: {summary}\nreplay with: triagebot replay {folder}\n")
    return 0
