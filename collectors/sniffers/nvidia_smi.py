"""Spotting nvidia-smi output (the default table, -q, -L, dmon) in a paste, apart from its parser
(collectors/parsers/gpu/nvidia_smi.py) and its table and query readers, which take these two shapes from here."""

from __future__ import annotations

import re

from collectors.lazy_regex import LazyPattern

# The sections of `nvidia-smi -q` the query reader reads counters from.
SECTIONS = LazyPattern(r"(?m)^\s*(Remapped Rows|ECC Errors|Retired Pages|Clocks (?:Event|Throttle) Reasons)\s*$")
# "| N/A   34C    P0   91W / 400W |  12034MiB / 81920MiB |     18%      Default |"
STATS = LazyPattern(r"\|\s*(?:\d+%|N/A)\s+(\d+)C\s+P\d+\s+(?:\d+W|N/A)\s*/\s*(?:\d+W|N/A)\s*\|"
                    r"\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(?:(\d+)%|N/A)")


def sniff(text: str) -> int:
    """0-100 confidence that the text is nvidia-smi or nvidia-smi dmon output."""
    head = text[:50_000]
    if "NVIDIA-SMI" in head and "Driver Version" in head:
        return 95
    if re.search(r"(?m)^#\s*gpu\s+.*\bsm\b", head):
        return 90
    if re.search(r"(?m)^=+NVSMI LOG=+\s*$", head):  # the banner `nvidia-smi -q` prints above its report
        return 90
    if re.search(r"(?m)^GPU \d+: .*\(UUID: GPU-[0-9a-fA-F-]+\)\s*$", head):  # `nvidia-smi -L`
        return 85
    # `nvidia-smi nvlink -s` (fix round f7): a -L heading whose UUID may be masked, then its links or NVML's
    # all-inactive line (collectors/parsers/gpu/nvlink_status.py).
    if re.search(r"(?m)^GPU \d+: .*\(UUID: [^)]*\)\s*\n(?:\s+Link \d+: (?:<inactive>|[\d.]+ [GM]B/s)|NVML: Unable to "
                 r"retrieve NVLink information)", head):
        return 85
    # `nvidia-smi nvlink -e` (round 16): a -L heading (its UUID may be left out), then a link's error counter.
    if re.search(r"(?m)^GPU \d+: [^\n]*\n\s+Link \d+: (?:Replay|Recovery|CRC) Errors: \d+\s*$", head):
        return 85
    if re.search(r"(?m)^\s+GPU UUID\s+: GPU-", head):  # a `nvidia-smi -q` report cut below its banner
        return 85
    if SECTIONS.search(head) and re.search(r"(?m)^\s+(?:Pending|(?:DRAM |SRAM )?(?:Unc|C)orrectable(?: Error)?)\s+: ",
                                           head):
        return 85
    return 40 if STATS.search(head) else 0
