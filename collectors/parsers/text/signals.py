"""The line-signal layer: facts from any line whose message means something, whatever wraps it.

Runs over every pasted artifact. Candidate lines are found with one linear RE2 pass over the whole text; each
candidate is then matched against the signals whose hints it holds (collectors/catalogs/signals.yaml).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from collectors.catalogs.signals import STATED_REASON, CompiledSignal, catalog_order, signals_by_hint
from collectors.catalogs.xid import secondary_codes
from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, Fact, ParseResult
from collectors.parsers.contract import guarded
from collectors.parsers.kubernetes.k8s_common import DedupSink
from collectors.parsers.kubernetes.k8s_event_facts import EventFacts
from collectors.parsers.kubernetes.k8s_event_rows import EventRecord, row_age
from collectors.parsers.kubernetes.messages.k8s_scheduling import scheduling_reasons
from collectors.parsers.text.needles import scan, utf8
from collectors.unwrap import MAX_LINE
from collectors.vocabulary import VOCABULARY

SYMPTOMS = "evidence.symptoms"  # what a message shows (playbooks/loader.py runs each playbook named here)

LineParser = Callable[[Artifact], ParseResult]

_MAX_CONTINUATION = 6
# Work per artifact is bounded whatever the input: hints are looked for at most this often each, and a signal is
# applied at most this often. A real paste reaches neither; a 200,000-line log of the same message does.
_MAX_PER_HINT = 2_000
_MAX_PER_SIGNAL = 500
# A line that starts a record of its own rather than continuing the one above.
_NEW_RECORD = LazyPattern(
    r"(?:Warning|Normal)\b|\S+\s+(?:Warning|Normal)\s|[IWEF]\d{4} |\d{4}-\d\d-\d\d|[A-Z][a-z]{2} +\d+ \d\d:|"
    r"[A-Z][\w ]{0,30}:(?:\s|$)|-{3,}|[\[{<#$>|]|\d+[smhd]\s")
# A message inside a string literal passed to a call, as source code holds it (`ret = append(ret, "container runtime
# is down")`, `log.Fatalf("...")`): the program's words quoted from its code, not printed by it. Only a call whose
# name starts lower case (Go's builtins and package functions, a logger's methods): a Python exception's repr in a
# log (`RuntimeError('CUDA error: ...')`) is what the program printed.
_IN_CODE_CALL = LazyPattern(r'(?:^|[^\w.])[a-z_][\w]*(?:\.[A-Za-z_]\w*)*\((?:[^()"]*,\s*)?"[^"]*$')
# Trailing punctuation of the structure a message sits in: a JSON string, a YAML value, a table cell.
_TRAILING = "\"',;|` \t\\"


# A structural parser that already reads a log kind line by line makes that kind's reader signals redundant.
_READS: dict[ArtifactKind, frozenset[str]] = {
    ArtifactKind.CONTAINER_LOG: frozenset({"container-log", "nccl-log"}),
    ArtifactKind.NCCL_LOG: frozenset({"nccl-log"}),
    ArtifactKind.KERNEL_LOG: frozenset({"kernel-log"}),
    ArtifactKind.KUBELET_LOG: frozenset({"kubelet-log"}),
}


def candidate_lines(text: str, skip: frozenset[str] = frozenset()) -> dict[int, set[str]]:
    """0-based numbers of the lines holding a hint of a signal not in `skip`, with the hints found, in order.

    One linear pass finds every hint (collectors/parsers/text/needles.py); a hint found on more than _MAX_PER_HINT
    lines stops being looked for.
    """
    found: dict[int, set[str]] = {}
    for hit in scan(utf8(text), signals_by_hint(skip), per_needle=_MAX_PER_HINT):
        found.setdefault(hit.line, set()).add(hit.needle)
    return dict(sorted(found.items()))


def read_signals(artifact: Artifact, readers: dict[ArtifactKind, LineParser]) -> ParseResult:
    """Facts from every line of the artifact that carries a known signal."""
    text = artifact.content
    lines = text.split("\n")
    sink = DedupSink(artifact, lines)
    events = EventFacts(sink, record_reasons=False)
    by_reader: dict[str, set[int]] = {}
    skip = _READS.get(artifact.kind, frozenset())
    owners = signals_by_hint(skip)
    budget: dict[str, int] = {}
    fired: dict[int, str] = {}  # line -> the first signal that read it, for each fact's `parser`
    read: dict[str, set[int]] = {}  # signal -> the lines it read
    xids: list[tuple[int, int]] = []  # (line, code) of every Xid code a signal read
    fed_failures: list[tuple[int, str]] = []  # (line, message) of every FailedScheduling a signal read
    for index, hints in candidate_lines(text, skip).items():
        line = lines[index][:MAX_LINE]
        # In catalog order, whatever order the line's hints were found in: which signal reads a line first (and so
        # which one a fact credits) must not depend on the process's hash seed.
        for signal in sorted({s.spec.id: s for h in hints for s in owners[h]}.values(),
                             key=lambda s: catalog_order()[s.spec.id]):
            if (budget.get(signal.spec.id, 0) >= _MAX_PER_SIGNAL or any(u in line for u in signal.spec.unless)
                    or _after(lines, index, signal.spec.unless_before)):
                continue
            m = signal.regex.search(line)
            if m is not None and _IN_CODE_CALL.search(line[:m.start()]) is None:
                # A signal whose facts are constants has said all it can; others read on, up to a budget.
                budget[signal.spec.id] = _MAX_PER_SIGNAL if signal.constant else budget.get(signal.spec.id, 0) + 1
                fired.setdefault(index + 1, signal.spec.id)
                read.setdefault(signal.spec.id, set()).add(index + 1)
                _apply(signal, m, index + 1, lines, sink, events, by_reader, xids)
                if signal.spec.event == "FailedScheduling":
                    fed_failures.append((index + 1, m.groupdict().get("message") or m.group(0)))
    _read_records(lines, owners, budget, (fired, read), sink, events, by_reader, xids)
    events.finish()
    _primary_xids(sink, xids)
    result = sink.done()
    if _a_passing_claim_wait(lines, fed_failures):
        result.facts = [f for f in result.facts if f.name != "scheduling.failed"]
    result.facts = [_read_by(f, fired, "") for f in result.facts]
    for kind, numbers in by_reader.items():
        sub = _only(artifact, lines, numbers, ArtifactKind(kind))
        reader = readers[ArtifactKind(kind)]
        name = reader.__module__.rsplit(".", 1)[-1]
        result.facts += [_read_by(f, fired, name) for f in guarded(reader, sub).facts]
    return result


def _after(lines: list[str], index: int, before: tuple[str, ...]) -> bool:
    """The line above holds one of `before` (the message whose payload this line is)."""
    return index > 0 and any(b in lines[index - 1][:MAX_LINE] for b in before)


# A member of a pretty-printed JSON object on a line of its own: `"error": "unexpected EOF",`.
_MEMBER = LazyPattern(r'^\s*"[^"\n]{1,100}"\s*:\s*\S')
_MAX_RECORDS = 200


def json_records(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first line, last line, the members joined on one line) of every run of two or more pretty-printed JSON
    members: a structured log entry copied from a log viewer or `jq`, one member a line, as the program wrote it on
    one line. A nested object or array ends the run (its members are another object's)."""
    out: list[tuple[int, int, str]] = []
    run: list[str] = []
    for index, line in enumerate([*lines, ""]):
        if len(line) <= MAX_LINE and _MEMBER.match(line) and not line.rstrip().endswith(("{", "[")):
            run.append(line.strip())
            continue
        if len(run) >= 2 and len(out) < _MAX_RECORDS:
            out.append((index - len(run) + 1, index, "{" + " ".join(run).rstrip(",") + "}"))
        run = []
    return out


def _read_records(lines: list[str], owners: dict[str, tuple[CompiledSignal, ...]], budget: dict[str, int],
                  seen: tuple[dict[int, str], dict[str, set[int]]], sink: DedupSink, events: EventFacts,
                  by_reader: dict[str, set[int]], xids: list[tuple[int, int]]) -> None:
    """The fact signals that read a pretty-printed JSON record only as the one line it was written as (a proxy's
    message and the error field four members below it), each cited at the record's first member line. A signal that
    already read one of the record's lines has said what it can."""
    fired, read = seen
    for first, last, record in json_records(lines):
        read_here = {sid for sid, numbers in read.items() if any(first <= n <= last for n in numbers)}
        for hints in candidate_lines(record).values():
            for signal in sorted({s.spec.id: s for h in hints for s in owners.get(h, ())}.values(),
                                 key=lambda s: catalog_order()[s.spec.id]):
                spec = signal.spec
                if (not spec.facts or spec.id in read_here or budget.get(spec.id, 0) >= _MAX_PER_SIGNAL
                        or any(u in record for u in spec.unless)):
                    continue
                if (m := signal.regex.search(record)) is not None:
                    budget[spec.id] = budget.get(spec.id, 0) + 1
                    fired.setdefault(first, spec.id)
                    _apply(signal, m, first, lines, sink, events, by_reader, xids)


# A clock time on the line: klog's "E1227 13:25:39.219980", an ISO or syslog timestamp.
_CLOCK = LazyPattern(r"(?:^|[\sT\[*])(\d\d):(\d\d):(\d\d)\b")
_REPEATED = LazyPattern(r"\(x\d+ over \d")
# Waiting longer than this for a claim to bind is more than provisioning a volume takes.
_CLAIM_WAIT_SECONDS = 30


def _a_passing_claim_wait(lines: list[str], failures: list[tuple[int, str]]) -> bool:
    """Every scheduling failure read from bare lines is the VolumeBinding plugin's "unbound immediate
    PersistentVolumeClaims", seen at one moment. The scheduler says it for every pod whose claim the volume
    controller has not bound yet, which is how each StatefulSet pod with a dynamically provisioned claim starts
    (kubernetes#86669, tektoncd/pipeline#899); it retries when the claim binds. It shows a pod that waits only when
    it lasts: the event's repeat count ("(x13 over 6m)") or the lines' clock times over more than half a minute."""
    if not failures or any(scheduling_reasons(message) != ["unbound-pvc"] for _, message in failures):
        return False
    said = [lines[number - 1] for number, _ in failures]
    if any(_REPEATED.search(line) for line in said):
        return False
    seconds = [int(h) * 3600 + int(m) * 60 + int(sec) for line in said if (c := _CLOCK.search(line))
               for h, m, sec in [c.groups()]]
    return not seconds or max(seconds) - min(seconds) < _CLAIM_WAIT_SECONDS


def _read_by(fact: Fact, fired: dict[int, str], reader: str) -> Fact:
    """The fact marked with the signal that found its line (and the parser it handed the line to)."""
    signal = fired.get(fact.citation.start, "")
    name = f"signal:{signal}" if signal else "signals"
    return replace(fact, parser=f"{reader} ({name})" if reader else name)


def _primary_xids(sink: DedupSink, xids: list[tuple[int, int]]) -> None:
    """Which of the Xid codes read are faults of their own rather than after-effects (45 after a process died),
    as the kernel and NVML readers say: an Xid named in prose or by a health check weighs the same way."""
    primary = [(line, code) for line, code in xids if code not in secondary_codes()]
    for line, code in primary:
        sink.add("xid.primary_codes", [code], line)
    if xids and not primary:
        sink.add("xid.primary_codes", [], xids[0][0])


def _apply(signal: CompiledSignal, m: Any, number: int, lines: list[str], sink: DedupSink, events: EventFacts,
           by_reader: dict[str, set[int]], xids: list[tuple[int, int]]) -> None:
    spec = signal.spec
    if spec.symptom is not None:
        sink.add(SYMPTOMS, [spec.symptom], number)
    if spec.reader is not None:
        by_reader.setdefault(spec.reader, set()).update(range(number, min(len(lines), number + spec.reader_lines) + 1))
    elif spec.event is not None:
        groups = m.groupdict()
        message, end = _continued(_clean(groups.get("message") or m.group(0)), lines, number)
        if spec.event == STATED_REASON:
            # An event as a component logged it: the line states its type and reason, so the reason is evidence.
            record = EventRecord(groups.get("type") or "Warning", groups.get("reason") or "", message, number, end,
                                 ago=row_age(lines[number - 1]))
            events.feed(record, stated=True)
        else:
            events.feed(EventRecord("Warning", spec.event, message, number, end, ago=row_age(lines[number - 1])))
    else:
        groups = m.groupdict()
        for name, template in spec.facts.items():
            value = _value(name, template, groups)
            if value is not None:
                sink.add(name, value, number)
                if name == "xid.codes" and isinstance(value, list):
                    xids += [(number, code) for code in value if isinstance(code, int)]


def _continued(message: str, lines: list[str], number: int) -> tuple[str, int]:
    """A message hard-wrapped onto the next lines (a terminal or a chat client broke it), joined; and its last line."""
    end = number
    while (end < len(lines) and end - number < _MAX_CONTINUATION and not message.endswith(".")
           and (following := lines[end].strip()) and len(following) < MAX_LINE and not _NEW_RECORD.match(following)):
        message = f"{message} {_clean(following)}"
        end += 1
    return message, end


def _clean(message: str) -> str:
    message = message.replace('\\"', '"').replace("\\n", " ").replace("''", "'").strip(_TRAILING)
    return message


# Two or more groups joined by separators, e.g. "{host}:{port}".
_JOINED = LazyPattern(r"\{\w+\}(?:[^{}\w]+\{\w+\})+")
_JOIN_PART = LazyPattern(r"([^{}\w]*)\{(\w+)\}")


def _value(name: str, template: Any, groups: dict[str, str | None]) -> object:
    """The fact's value: a constant, or a named group converted to the fact's type (None when unreadable)."""
    kind = VOCABULARY[name].type
    if isinstance(template, list):
        items = [_value_one(str(t), groups, kind.removeprefix("list[").removesuffix("]")) for t in template]
        return None if any(i is None for i in items) else items
    if kind == "list[int]" and isinstance(template, str) and _ONE_GROUP.fullmatch(template):
        # One group holding a comma-separated list of numbers, as a program prints a list of ranks: "1, 3".
        raw = groups.get(template[1:-1])
        numbers = [part.strip() for part in raw.split(",")] if raw else []
        return [int(n) for n in numbers] if numbers and all(n.isdigit() for n in numbers) else None
    return _value_one(template, groups, kind) if isinstance(template, str) else template


_ONE_GROUP = LazyPattern(r"\{\w+\}")
_RATIO = LazyPattern(r"\{(\w+)\}/\{(\w+)\}")
_SCALED = LazyPattern(r"\{(\w+)\}e(-?\d+)")


def _number(raw: str | None) -> float | None:
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


def _value_one(template: str, groups: dict[str, str | None], kind: str) -> object:
    """"{name}" is a group as it reads; "{name}%" a percentage read as a ratio (44% -> 0.44); "{host}:{port}"
    joins groups (a group that did not take part is left out with the separator before it). For a float fact,
    "{part}/{whole}" is the ratio of two groups and "{name}e-6" a group scaled (microseconds to seconds)."""
    if kind == "float" and (m := _RATIO.fullmatch(template)):
        part, whole = _number(groups.get(m.group(1))), _number(groups.get(m.group(2)))
        return round(part / whole, 4) if part is not None and whole else None
    if kind == "float" and (m := _SCALED.fullmatch(template)):
        value = _number(groups.get(m.group(1)))
        return round(value * 10 ** int(m.group(2)), 6) if value is not None else None
    if _JOINED.fullmatch(template):
        parts = [(sep, groups.get(name)) for sep, name in _JOIN_PART.findall(template)]
        if parts[0][1] is None:
            return None
        return "".join(f"{sep}{value}" for sep, value in parts if value is not None)
    percent = template.endswith("%")
    name = template.removesuffix("%")
    if not (name.startswith("{") and name.endswith("}")):
        # A constant, of the fact's type: the 502 a proxy always answers with is a status, not the text "502".
        return int(template) if kind == "int" and template.isdigit() else template
    raw = groups.get(name[1:-1])
    if raw is None:
        return None
    if percent:
        try:
            return round(float(raw) / 100, 4)
        except ValueError:
            return None
    if kind == "int":
        return int(raw) if raw.isdigit() else None
    if kind == "float":
        try:
            return float(raw)
        except ValueError:
            return None
    return raw


def _only(artifact: Artifact, lines: list[str], numbers: set[int], kind: ArtifactKind) -> Artifact:
    """The artifact with every line but `numbers` blanked, so the reader's citations keep the numbering."""
    content = "\n".join(line if n in numbers else "" for n, line in enumerate(lines, 1))
    return replace(artifact, kind=kind, content=content)


def without_repeats(structural: list[Fact], signalled: list[Fact], summaries: bool = False) -> list[Fact]:
    """Signal facts the structural parser did not already give: one reading of a line, not two.

    A line the structural parser drew facts of a family from is its to read for that family (it may know that a
    later event undoes it), and a fact it gave is not given again from elsewhere in the same artifact. Symptoms
    add up instead: every reader may name one the others did not (a curl 503 names error-rate, the proxy's NR flag
    on the same line service-unreachable), so `evidence.symptoms` is kept when it names a symptom not yet named.
    With `summaries`, the structural facts are figures over their span rather than readings of each line in it (an
    access log's 5xx share cites its first to last request, and nginx's error-log lines sit between the access
    lines): only a fact it gave is not given again.
    """
    symptoms = {str(v) for f in structural if f.name == SYMPTOMS and isinstance(f.value, list) for v in f.value}
    # A structural reading that could not classify ("other" of a fact merged `specific`, the kubelet's bare "Error:
    # ErrImagePull") claims nothing: a signal that classifies the same failure (its message wrapped over lines the
    # table parser could not read as a row) is the reading the merge would keep anyway.
    named = {f.name for f in structural if not _unclassified(f)}
    read: dict[str, list[tuple[int, int]]] = {}  # fact family ("scheduling" for scheduling.failed) -> line spans
    for f in [] if summaries else structural:
        if f.citation.start > 0:
            read.setdefault(_family(f.name), []).append((f.citation.start, f.citation.end))

    def overlaps(f: Fact) -> bool:
        return any(start <= f.citation.end and f.citation.start <= end for start, end in read.get(_family(f.name), ()))

    def new_symptom(f: Fact) -> bool:
        return isinstance(f.value, list) and not {str(v) for v in f.value} <= symptoms

    return [f for f in signalled
            if (new_symptom(f) if f.name == SYMPTOMS else f.name not in named and not overlaps(f))]


def _unclassified(fact: Fact) -> bool:
    spec = VOCABULARY.get(fact.name)
    return spec is not None and spec.merge == "specific" and fact.value == "other"


def _family(name: str) -> str:
    return name.split(".", 1)[0]
