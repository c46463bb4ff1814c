"""Spotting NCCL and PyTorch-distributed output in a paste, apart from its parser (collectors/parsers/gpu/nccl.py),
which is loaded only for a paste that holds some."""

from __future__ import annotations

from collectors.lazy_regex import LazyPattern
from collectors.text import normalise

# ---- recognising NCCL text in a paste ----------------------------------------------------------------

# Cheap checks first: most lines of an NCCL log say so outright, and most other lines hold no hint.
_CLAIM_FAST = (" NCCL INFO ", " NCCL WARN ", "ProcessGroupNCCL", "[c10d]", "torch.distributed")
_CLAIM_HINTS = ("NCCL", "nccl", "Dist", "Watchdog", "barrier", "join", "ollectives", "Duplicate GPU",
                "device_count", "socketStartConnect", "Rendezvous", "The connection to", " -> ")
_CLAIM = LazyPattern(
    r"\bNCCL (?:INFO|WARN|TRACE|ERROR|ABORT)\b|ProcessGroupNCCL|\[c10d\]|torch\.distributed|"
    r"Dist(?:Store|Network|Backend)Error|\bnccl(?:[A-Z]\w*(?:Error|Argument|Usage)|InProgress|Timeout)\b|NCCL [Ee]rror|"
    r"NCCL communicator|Watchdog caught|Some NCCL operations|Heartbeat monitor timed out|"
    r"ProcessGroupNCCL's watchdog got stuck|"
    r"store based barrier|Waiting for all processes to join|Detected mismatch between collectives|"
    r"Duplicate GPU detected|socketStartConnect|torch\.cuda\.device_count|Rendezvous(?:Timeout|Connection)Error|"
    # torchrun's agent that could not reach its rendezvous store (elastic/rendezvous/*_rendezvous_backend.py)
    r"The connection to (?:the C10d store has failed|etcd has failed\. See inner)|clients joined|"
    # NCCL's return-code trace with its `host:pid:tid [dev] NCCL INFO` header cut off: `init.cc:1621 -> 2`
    r"^\s*[\w./+-]{1,200}\.(?:cc|cu):\d{1,6}(?: \(\w{1,120}\))? -> \d{1,2}\b"
)
# Bounded: host names are short, and an unbounded \S+ makes a search over a long token quadratic.
_NCCL_LINE = LazyPattern(r"[^\s:]{1,253}:\d{1,10}:\d{1,10} \[\d{1,4}\] NCCL (?:INFO|WARN)")


def claims_line(line: str) -> bool:
    """Whether one line of a mixed paste is NCCL or PyTorch-distributed output."""
    for hint in _CLAIM_FAST:
        if hint in line:
            return True
    for hint in _CLAIM_HINTS:
        if hint in line:
            return _CLAIM.search(line) is not None
    return False


def sniff(text: str) -> int:
    """0-100 confidence that the text is NCCL / PyTorch distributed output."""
    lines = [ln for ln in normalise(text[:200_000]).split("\n")[:1000] if ln.strip()][:500]
    if not lines:
        return 0
    claimed = sum(1 for ln in lines if claims_line(ln))
    score = round(95 * claimed / len(lines))
    if any(" NCCL " in ln and _NCCL_LINE.search(ln) for ln in lines):
        score = max(score, 85)  # genuine NCCL_DEBUG lines outweigh the training chatter around them
    elif claimed:
        score = max(score, 60)
    return min(score, 100)
