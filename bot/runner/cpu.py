"""CPU policy of the bot's background processes: a request's thread gets a core the moment it wakes.

The serving process answers Slack's acks and Alertmanager's webhooks (latency work, budgets in tens of
milliseconds); the triage workers run 20 triages at once (throughput work, seconds each); the alert ingester applies
answered notifications (between the two: a root post and its triage wait for it, nobody's HTTP request does).

- Triage workers run SCHED_IDLE (`background()`). A nice value only weighs the share of a core: at nice 10 a worker
  thread still has a tenth of a nice-0 thread's weight, and with 20 of them runnable a woken request thread may wait
  behind one for a slice. A SCHED_IDLE thread runs only on a core no normal thread wants, a normal thread that wakes
  preempts it at once, and the kernel places a waking thread on a core that runs only SCHED_IDLE threads as on an
  idle one. Lowering a thread to SCHED_IDLE needs no privilege. The scope: Linux compares policies within one CPU
  cgroup, so in a pod (or a systemd service) the triages yield to the bot's own serving and ingester processes, not
  to the other pods of the node, which the cgroups' weights share out as before. On a machine where everything
  shares one cgroup, the triages get only what every other normal process leaves. Where SCHED_IDLE does not exist
  (not Linux), nice 10.
- The ingester runs SCHED_BATCH at nice 5 (`behind_requests()`). Not SCHED_IDLE: it would then share the idle
  class with the 20 triage threads, one weight among 21, and answered notifications would pile up behind triages.
  SCHED_BATCH keeps its nice-5 share but stops it preempting on wake-up: every webhook wakes it just before the
  serving process writes that webhook's answer, and it must not take the core from that answer. Where SCHED_BATCH
  does not exist, nice 5 alone.

Both apply to the calling thread and to the threads it starts afterwards (Linux keeps policy and nice per thread),
so each process sets them on its main thread before it starts any other.
"""

from __future__ import annotations

import contextlib
import os

BACKGROUND_NICE = 10  # the fallback of background(): a tenth of a nice-0 thread's weight
BEHIND_REQUESTS_NICE = 5  # the ingester's: a third of a nice-0 thread's weight, ten times an idle thread's


def background() -> str:
    """Run the calling thread (and those it starts next) as SCHED_IDLE, else at nice 10; says which."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        return "SCHED_IDLE"
    except (AttributeError, OSError):
        with contextlib.suppress(OSError):
            os.nice(BACKGROUND_NICE)
        return f"nice {BACKGROUND_NICE}"


def behind_requests() -> str:
    """Run the calling thread (and those it starts next) as SCHED_BATCH at nice 5, else at nice 5; says which."""
    policy = "SCHED_BATCH, "
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except (AttributeError, OSError):
        policy = ""
    with contextlib.suppress(OSError):
        os.nice(BEHIND_REQUESTS_NICE)
    return f"{policy}nice {BEHIND_REQUESTS_NICE}"
