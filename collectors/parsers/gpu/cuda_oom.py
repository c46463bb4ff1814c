"""The figures in PyTorch's CUDA out-of-memory message: what was asked for, and what the cache held unused.

PyTorch's caching allocator keeps freed blocks reserved for reuse. Before it reports an OOM it has already
released every cached segment that holds no live tensor, so memory still "reserved but unallocated" in the
message sits in segments pinned by live blocks: free in total, but cut into pieces. When that idle memory is
at least the size of the failed request, the request failed for want of one contiguous piece, not for want
of memory (PyTorch docs, "CUDA memory management"; pytorch/pytorch#35901).

Two message shapes are read, both one line:
- before PyTorch 2.1: "Tried to allocate 2.51 GiB (GPU 0; 15.78 GiB total capacity; 6.25 GiB already
  allocated; 283.44 MiB free; 13.91 GiB reserved in total by PyTorch)", with "15.77 GiB allowed; " after the free
  figure in 1.13 and 2.0 (c10/cuda/CUDACachingAllocator.cpp, the allowed memory under a memory fraction);
- from 2.1: "Tried to allocate 546.00 MiB. GPU 0 has a total capacity of 15.77 GiB of which 514.19 MiB is
  free. ... Of the allocated memory 13.73 GiB is allocated by PyTorch, [with 46.00 MiB allocated in private
  pools (e.g., CUDA Graphs),] and 736.86 MiB is reserved by PyTorch but unallocated."
The oldest shape ("... 551.04 MiB cached)") is not read: "cached" meant different things across releases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SIZE = r"\d+(?:\.\d+)?) (?:(?P<{0}u>[KMGT]i?B)|bytes)"
_UNIT = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}

_OLD = re.compile(
    r"Tried to allocate (?P<req>" + _SIZE.format("req") + r" \(GPU \d+; "
    r"(?P<total>" + _SIZE.format("total") + r" total capacity; "
    r"(?P<alloc>" + _SIZE.format("alloc") + r" already allocated; "
    r"(?:[^;()]{0,60}; )?"  # some builds add a field here; skip one at most
    r"(?P<free>" + _SIZE.format("free") + r" free; "
    r"(?:\d+(?:\.\d+)? [KMGT]i?B allowed; )?"  # 1.13 and 2.0 print the per-process cap when one is set
    r"(?P<reserved>" + _SIZE.format("reserved") + r" reserved in total by Py[Tt]orch")
_NEW_REQUEST = re.compile(r"Tried to allocate (?P<req>" + _SIZE.format("req") + r"\. GPU")
# 2.1 spelt it "total capacty"; later releases "total capacity".
_NEW_TOTAL = re.compile(r"has a total capac(?:i)?ty of (?P<total>" + _SIZE.format("total"))
_NEW_SPLIT = re.compile(
    r"Of the allocated memory (?P<alloc>" + _SIZE.format("alloc") + r" is allocated by PyTorch, "
    r"(?:with [^,]{0,80} allocated in private pools \([^)]{0,40}\), )?"
    r"and (?P<unalloc>" + _SIZE.format("unalloc") + r" is reserved by PyTorch but unallocated")

# The message is one line, but a long line may be cut anywhere; look no further than this into it.
_WINDOW = 4096


@dataclass(frozen=True)
class OomFigures:
    """Bytes, as PyTorch printed them (rounded to its two decimals)."""

    requested: int
    allocated: int  # held by live tensors
    reserved_unallocated: int  # held by the caching allocator, not by any tensor
    total: int = 0  # the GPU's capacity as the message states it; 0 when it does not

    @property
    def allocated_share(self) -> float | None:
        """Live tensors of the failing process over the GPU's capacity (None when the capacity is not stated)."""
        return round(self.allocated / self.total, 3) if self.total else None

    @property
    def unallocated_share(self) -> float:
        """Reserved-but-unallocated over everything PyTorch reserved (0 when it reserved nothing)."""
        reserved = self.allocated + self.reserved_unallocated
        return round(self.reserved_unallocated / reserved, 3) if reserved else 0.0


def _bytes(match: re.Match[str], name: str) -> int:
    number = float(match.group(name))
    unit = match.group(f"{name}u")
    return round(number * (_UNIT[unit[0]] if unit and unit[0] in _UNIT else 1))


def read_figures(text: str) -> OomFigures | None:
    """The figures of the first PyTorch OOM message in `text` (one line, or a few joined), if it has them."""
    window = text[:_WINDOW]
    if "Tried to allocate" not in window:
        return None
    if (old := _OLD.search(window)) is not None:
        allocated, reserved = _bytes(old, "alloc"), _bytes(old, "reserved")
        if reserved < allocated:  # not a message PyTorch writes; do not guess
            return None
        return OomFigures(_bytes(old, "req"), allocated, reserved - allocated, _bytes(old, "total"))
    request, split = _NEW_REQUEST.search(window), _NEW_SPLIT.search(window)
    if request is None or split is None or split.start() < request.start():
        return None
    total = _NEW_TOTAL.search(window)
    return OomFigures(_bytes(request, "req"), _bytes(split, "alloc"), _bytes(split, "unalloc"),
                      _bytes(total, "total") if total is not None else 0)
