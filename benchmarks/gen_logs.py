"""Synthetic but realistically shaped kernel + NCCL logs for the analyze benchmark."""

from __future__ import annotations

import random

_KERNEL = [
    "[{t:.6f}] IPv6: ADDRCONF(NETDEV_CHANGE): cali{h}: link becomes ready",
    "[{t:.6f}] eth0: renamed from tmp{h}",
    "[{t:.6f}] NVRM: Xid (PCI:0000:{b:02x}:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
    "[{t:.6f}] NVRM: Xid (PCI:0000:{b:02x}:00): 45, pid=1234, name=python, Ch 00000010",
    "[{t:.6f}] nf_conntrack: nf_conntrack: table full, dropping packet",
    "[{t:.6f}] Memory cgroup out of memory: Killed process {p} (python) total-vm:1234kB, anon-rss:1000kB",
    "[{t:.6f}] audit: type=1400 audit({t:.3f}:{p}): apparmor=\"DENIED\" operation=\"open\"",
]
_NCCL = [
    "trainer-{r}:{p}:{p} [{r}] NCCL INFO Channel 00/02 :    0   1   2   3",
    "trainer-{r}:{p}:{p} [{r}] NCCL INFO NET/Socket : Using [0]eth0:10.244.{r}.5<0>",
    "trainer-{r}:{p}:{p} [{r}] NCCL INFO Connected all rings",
    "trainer-{r}:{p}:{p} [{r}] NCCL INFO comm 0x55d4 rank {r} nranks 4 cudaDev {r} busId {b:x}000 - Init COMPLETE",
    "[rank{r}]:[E ProcessGroupNCCL.cpp:563] [Rank {r}] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum={p}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800061 "
    "milliseconds before timing out.",
]


def mixed_log(lines: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    out = []
    t = 1000.0
    for i in range(lines):
        t += rng.random() / 10
        pool = _KERNEL if i % 2 == 0 else _NCCL
        # Rare lines (Xid, OOM, conntrack) stay rare, as in a real log.
        template = pool[rng.randrange(len(pool))] if rng.random() < 0.02 else pool[i % 2]
        out.append(template.format(t=t, h=rng.randrange(1 << 16), b=rng.randrange(256), p=rng.randrange(99999),
                                   r=rng.randrange(4)))
    return "\n".join(out) + "\n"


# Kinds in blocks, for the orders that once went quadratic: each is one kind's lines, in the shape its reader claims.
_ORDER_NCCL = "trainer-{r}:{p}:{p} [{r}] NCCL INFO Channel 00/02 :    0   1   2   3"
_ORDER_KERNEL = "[{t:.6f}] IPv6: ADDRCONF(NETDEV_CHANGE): cali{p}: link becomes ready"
_ORDER_KUBELET = 'I1122 06:01:02.{p:06d}    1234 kubelet.go:2345] "SyncLoop (PLEG): event for pod" pod="shop/web-{r}"'
_ORDER_BLOCKS = {
    "nccl": [_ORDER_NCCL], "kernel": [_ORDER_KERNEL], "kubelet": [_ORDER_KUBELET],
    "describe": ["Events:", "  Type     Reason   Age  From     Message", "  ----     ------   ---  ----     -------",
                 "  Warning  BackOff  3m   kubelet  Back-off restarting failed container app in pod web-{r}", ""],
    "conntrack": ["cpu=0   \tfound=0 invalid=0 insert=0 insert_failed={r} drop=3 early_drop=0 error=0", ""],
    "cpu.stat": ["nr_periods 100", "nr_throttled {r}", "throttled_usec 0", ""],
}


def ordered_log(lines: int, kinds: list[str], interleaved: bool, seed: int = 7) -> str:
    """About `lines` lines of blocks of `kinds`: taken in turn (interleaved), or each kind's blocks together in
    the order given (grouped); both orders hold exactly the same blocks."""
    rng = random.Random(seed)
    size = sum(len(_ORDER_BLOCKS[k]) for k in kinds)
    rounds = max(1, lines // size)
    made = {(k, i): "\n".join(t.format(t=1000 + i / 10, p=rng.randrange(999999), r=rng.randrange(8))
                               for t in _ORDER_BLOCKS[k]) for k in kinds for i in range(rounds)}
    order = [(k, i) for i in range(rounds) for k in kinds] if interleaved else \
        [(k, i) for k in kinds for i in range(rounds)]
    return "\n".join(made[key] for key in order) + "\n"
