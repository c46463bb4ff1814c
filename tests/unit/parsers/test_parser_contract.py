"""The contract every parser in the registry keeps, checked table-driven over `registry.all_parsers()` (a new
parser is covered the day it is registered): on garbage, empty and huge input it returns a ParseResult without
raising, and every fact it emits, on garbage and on real evidence, cites lines that lie inside its artifact.

No parser catches its own bugs: `collectors.parsers.contract.guarded` is the one guard (test_parser_guard.py). So
an exception here is a parser's bug, not something a catch-all hid.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors.detect import split
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.gpu import flight_recorder
from collectors.parsers.registry import LINE_CLAIMS, SNIFFERS, all_parsers
from collectors.paste import artifacts_from_text
from collectors.text import normalise
from collectors.vocabulary import VOCABULARY, conforms
from drills.recorded.incident import incident_dirs, load_incident

TESTS = Path(__file__).resolve().parents[2]

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

# ---- garbage -----------------------------------------------------------------------------------------------------

text_strategy = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=40)), max_size=25).map(
    lambda parts: "\n".join(parts))
# The characters tables, access logs and describe output are made of, so a parser's row and column readers run.
shaped = st.text(alphabet=st.sampled_from(list('"[]- 0123456789/:.|<>%{}#\t\nNAMEREFCTSPOD/GETUHabcdef')),
                 max_size=400)
decoded = st.binary(max_size=400).map(lambda b: b.decode("utf-8", errors="replace"))
binaryish = st.binary(max_size=400).map(lambda b: b.decode("latin-1"))  # NULs, control characters, lone CRs
json_strategy = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["kind", "items", "status", "data", "result", "metadata", "spec",
                                       "alerts", "labels", "containerStatuses", "value", "values", "x"]),
                      children, max_size=5),
    max_leaves=20,
).map(json.dumps)
# Nesting deeper than Python's recursion limit in flow form (JSON, YAML flow), and deep block YAML (its size grows
# with the square of the depth, so it stays shallower).
depth = st.one_of(st.integers(min_value=1, max_value=50), st.integers(min_value=990, max_value=5000))
flow_nested = st.tuples(st.sampled_from(["[", '{"kind":', '{"items": [', "- ", "kind: Pod\nspec: ["]), depth).map(
    lambda t: t[0] * t[1] + "]" * t[1])
block_nested = st.integers(min_value=1, max_value=300).map(
    lambda depth: "apiVersion: v1\nkind: Pod\n" + "".join("  " * i + f"k{i}:\n" for i in range(depth)))
garbage = st.one_of(text_strategy, shaped, decoded, binaryish, json_strategy, flow_nested, block_nested)

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def name(parser: Parser) -> str:
    return parser.parse.__module__.rsplit(".", 1)[-1]


every_parser = pytest.mark.parametrize("parser", all_parsers(), ids=name)


def line_count(text: str) -> int:
    return len(normalise(text).split("\n"))


def read(parser: Parser, text: str, artifact_id: str = "contract") -> ParseResult:
    """The parser's reading, checked against the contract: a ParseResult, facts in the vocabulary, each cited inside
    the artifact (1 <= start <= end <= its lines, or start == end == 0 for the whole artifact)."""
    result = parser.parse(Artifact(id=artifact_id, kind=parser.kind, content=text))
    assert isinstance(result, ParseResult)
    lines = line_count(text)
    for fact in result.facts:
        assert conforms(fact.value, VOCABULARY[fact.name].type), fact
        cited = fact.citation
        assert cited.artifact == artifact_id, fact
        assert (cited.start, cited.end) == (0, 0) or 1 <= cited.start <= cited.end <= lines, (fact, lines)
    assert not [p for p in result.problems if p.startswith("internal:")]
    return result


@every_parser
@SETTINGS
@given(text=garbage)
def test_a_parser_reads_garbage_without_raising(parser: Parser, text: str) -> None:
    read(parser, text)


@every_parser
@pytest.mark.parametrize("text", ["", "\n", "\r\n", "   \n\t\n"], ids=["empty", "newline", "crlf", "blank"])
def test_a_parser_reads_nothing_from_empty_input(parser: Parser, text: str) -> None:
    assert read(parser, text).facts == []


def one_mb_line() -> str:
    unit = " ".join(FRAGMENTS).replace("\n", " ").replace("\r", " ")
    return (unit * (1_000_000 // len(unit) + 1))[:1_000_000]


def short_lines() -> str:
    lines = [line for fragment in FRAGMENTS for line in normalise(fragment).split("\n")]
    return "\n".join(lines[i % len(lines)] for i in range(50_000))


@every_parser
@pytest.mark.parametrize("make", [one_mb_line, short_lines], ids=["1MB-line", "50k-lines"])
def test_a_parser_reads_huge_input_without_raising(parser: Parser, make: object) -> None:
    assert callable(make)
    read(parser, make())


# ---- real evidence -----------------------------------------------------------------------------------------------


@cache
def real_inputs() -> tuple[tuple[str, ArtifactKind | None, str], ...]:
    """(where, kind, text) of real evidence: every text fixture of the parsers' tests (kind None: every parser reads
    it, whatever it holds), each rank-dump folder as the one artifact it is read as, every artifact of the recorded
    incidents and the pieces detection cuts from the regression corpus's pastes."""
    inputs: list[tuple[str, ArtifactKind | None, str]] = []
    for path in sorted((TESTS / "fixtures" / "parsers").rglob("*")):
        if path.is_file() and path.suffix not in (".py", ".yaml", ".md"):
            inputs.append((str(path.relative_to(TESTS)), None, path.read_text(encoding="utf-8", errors="replace")))
    for folder in sorted((TESTS / "fixtures" / "flight_recorder").iterdir()):
        dumps = [(f"nccl_trace_rank_{p.stem.split('_')[1]}", p.read_bytes()) for p in sorted(folder.glob("rank_*.pkl"))]
        if dumps:
            bundled = flight_recorder.bundle(dumps)[0]
            inputs.append((str(folder.relative_to(TESTS)), ArtifactKind.FLIGHT_RECORDER, bundled))
    for folder in incident_dirs():
        inputs += [(f"{folder.name}/{a.id}", a.kind, a.content) for a in load_incident(folder).artifacts
                   if a.unavailable is None]
    for evidence in sorted((TESTS / "realworld").glob("*/*/evidence.txt")):
        text = evidence.read_text(encoding="utf-8", errors="replace")
        inputs += [(a.id, a.kind, a.content) for a in artifacts_from_text(text, evidence.parent.name)]
    return tuple(inputs)


@every_parser
def test_every_fact_a_parser_reads_from_real_evidence_cites_lines_inside_it(parser: Parser) -> None:
    facts = sum(len(read(parser, text, where).facts) for where, kind, text in real_inputs()
                if kind is None or kind in parser.kinds)
    # A parser that reads nothing real leaves its citations unchecked: register it with a fixture it reads.
    assert facts > 0


# ---- detection ---------------------------------------------------------------------------------------------------


@SETTINGS
@given(text=st.one_of(text_strategy, shaped, json_strategy))
def test_sniffers_and_splitter_never_raise(text: str) -> None:
    for sniff in SNIFFERS.values():
        assert 0 <= sniff(text) <= 100
    for _, claims in LINE_CLAIMS:
        for line in text.split("\n"):
            assert claims(line) in (True, False)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
    for segment in split(text):
        assert 1 <= segment.start <= segment.end <= lines
