"""Property tests: no parser, sniffer or splitter raises or hangs on arbitrary input."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors.detect import split
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import LINE_CLAIMS, PARSERS, SNIFFERS
from collectors.vocabulary import VOCABULARY, conforms

# Fragments of real evidence, so generated text reaches deep into the parsers, not just their first check.
FRAGMENTS = [
    "NVRM: Xid (PCI:0000:2b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
    "Out of memory: Killed process 4321 (python)", "oom-kill:constraint=CONSTRAINT_MEMCG,",
    "nf_conntrack: table full, dropping packet", "cpu=0 found=0 invalid=1 insert_failed=3 drop=3 early_drop=0",
    "nr_periods 100\nnr_throttled 40\nthrottled_usec 1000", "Name:         trainer-0\nNamespace:    ml\n",
    "    State:          Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n",
    "  Warning  FailedScheduling  30m  default-scheduler  0/10 nodes are available: 10 Insufficient nvidia.com/gpu",
    "LAST SEEN   TYPE      REASON   OBJECT   MESSAGE", '{"kind": "Pod", "status": {"phase": "Pending"}}',
    '{"kind": "List", "items": [{"kind": "Node"}]}', "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n",
    "trainer-0:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>", "NCCL INFO Bootstrap : Using eth0",
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=1800000)",
    "[PG ID 0 PG GUID 0(default_pg) Rank 3] Received a dump signal due to a collective timeout from  rank 1",
    "Last enqueued NCCL work: -1, last completed NCCL work: 7.", "[1,3]<stderr>:", "init.cc:864 -> 2",
    "NCCL error in: a.cpp:1, unhandled system error, NCCL version 2.7.8", "ncclRemoteError: x",
    '# HELP DCGM_FI_DEV_GPU_UTIL x\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu="0"} 99',
    '{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"2"]}]}}',
    '{"version":"4","status":"firing","alerts":[{"labels":{"alertname":"KubePodCrashLooping"}}]}',
    "[FIRING:1] KubePodCrashLooping (shop/checkout)", "torch.OutOfMemoryError: CUDA out of memory.",
    'Nov 22 06:01:02 n kubelet[1]: I1122 06:01:02.1 1 eviction_manager.go:366] "Eviction manager: attempting"',
    "| N/A   34C    P0   91W / 400W |  12034MiB / 81920MiB |     18%      Default |",
    "# gpu   pwr  gtemp  mtemp    sm   mem", "    0    75     45      -    20    10",
    "%Cpu(s): 96.1 us,  1.6 id,  0.2 wa",
    '{"kind": "Endpoints", "subsets": [{"notReadyAddresses": [{"ip": "1"}]}]}',
    "NAME     ENDPOINTS     AGE", "web   <none>   36m", "web  10.0.0.1:80,10.0.0.2:80 + 3 more...   5d",
    "Multi-Attach error for volume", 'failed to allocate for range 0', "PLEG is not healthy",
    "\x1b[31m", "\r\n", "\x00", "{", "[", "- ", "  ", ":", '"', "\t", "0/", "Xid (PCI:", "=",
]

text_strategy = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=40)), max_size=25).map(
    lambda parts: "\n".join(parts))
json_strategy = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["kind", "items", "status", "data", "result", "metadata", "spec",
                                       "alerts", "labels", "containerStatuses", "value", "values", "x"]),
                      children, max_size=5),
    max_leaves=20,
).map(json.dumps)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(kind: ArtifactKind, text: str) -> None:
    result = PARSERS[kind](Artifact(id="fuzz", kind=kind, content=text))
    for fact in result.facts:
        spec = VOCABULARY[fact.name]
        assert conforms(fact.value, spec.type), fact
    assert not [p for p in result.problems if p.startswith("internal:")]


@SETTINGS
@given(text=st.one_of(text_strategy, json_strategy), kind=st.sampled_from(sorted(PARSERS)))
def test_parsers_never_raise(text: str, kind: ArtifactKind) -> None:
    check(kind, text)


@SETTINGS
@given(data=st.binary(max_size=400), kind=st.sampled_from(sorted(PARSERS)))
def test_parsers_survive_arbitrary_bytes(data: bytes, kind: ArtifactKind) -> None:
    check(kind, data.decode("utf-8", errors="replace"))


@SETTINGS
@given(text=st.one_of(text_strategy, json_strategy))
def test_sniffers_and_splitter_never_raise(text: str) -> None:
    for sniff in SNIFFERS.values():
        assert 0 <= sniff(text) <= 100
    for _, claims in LINE_CLAIMS:
        for line in text.split("\n"):
            assert claims(line) in (True, False)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
    for segment in split(text):
        assert 1 <= segment.start <= segment.end <= lines
