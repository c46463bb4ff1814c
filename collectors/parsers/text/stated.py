"""Stated observations: terms of art a person wrote in a sentence, read as facts that are said, not shown.

"Our pod keeps getting OOMKilled", "it exits with exit code 137", "the node is NotReady": the identifiers a
program prints (collectors/catalogs/stated.yaml), in a line that is prose, that no other reader read, outside
a fenced code block. A term that is negated or asked about ("not OOMKilled", "is it ImagePullBackOff?", "instead of
503") is not read. Every fact names its parser `stated:<id>`, which the engine weighs as stated (likely at most).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import replace

from collectors.catalogs.signals import signal_pattern
from collectors.catalogs.stated import CompiledTerm, stated_terms
from collectors.lazy_regex import LazyPattern
from collectors.models import STATED_PREFIX, Artifact, Citation, Fact, ParseResult, is_stated
from collectors.parsers.text import cjk
from collectors.parsers.text.needles import lines_holding, scan, utf8
from collectors.unwrap import MAX_LINE
from collectors.vocabulary import VOCABULARY

_MAX_LINES = 2_000  # candidate lines read per artifact: a real paste has a few sentences, a log has none
_FENCE = ("```", "~~~")
# A line that is program output, not a sentence: a timestamp or figures in a row ("24 batch size ..." is a
# sentence), a bracketed or braced record, a klog or syslog
# prefix, `key: value` or `key=value` at its start, a table row.
_OUTPUT = LazyPattern(
    r"^\s*(?:\d+(?:[-:/.,]\d|\s+\d|\s*[|%\]])|[\[{<(|$#`'\x22]|[IWEF]\d{4}\b|[A-Z][a-z]{2} +\d+ \d\d:|[\w.-]+=|"
    r"[A-Z][\w .-]{0,30}:\s|[\w-]+:\s+\S+$)")
# A field label of a few words in front ("What happened: ...", "Reason: OOMKilled"): what follows it must be a
# sentence itself. A label with a full stop in it ("Checked. Short answer: ...") is the end of another sentence.
_FIELD = LazyPattern(r"^\s*\**[A-Za-z][\w -]{0,30}\**:\**\s+")
# A sentence whose first word is set off as inline code ("`iptables-save` was also missing all of the service rules"):
# a short span closed on the line and followed by a word in lower case is the sentence's subject, not a command's
# output, which a backquote in front otherwise marks.
_CODE_SUBJECT = LazyPattern(r"^\s*`[^`\n]{1,60}`(?=\s+[a-z]+\b)")
# A sentence set off in round brackets on a line of its own: words inside, no code or output.
_ASIDE = LazyPattern(r"^\s*\(([A-Za-z][^()]*)\)\s*$")
# Marks of a program's message however sentence-like it reads: an exception or error class in front
# ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to ..."), a source file and line, a log level in
# capitals, a syslog `proc[pid]:`, NCCL's `host:pid:tid`, an address in hex, cells aligned in columns (by tabs, with
# or without a space before each: kubectl 1.4-1.6 printed describe's tables through a tabwriter that left both).
_PROGRAM = LazyPattern(
    r"\b\w*(?:Error|Exception|Warning)\b:|\b[\w/.-]+\.(?:cc|cpp|cu|c|h|go|py|java|rs|js|ts):\d+|"
    r"\b(?:WARN|WARNING|ERROR|INFO|DEBUG|FATAL|CRITICAL)\b|\w\[\d+\]:|\b\S+:\d+:\d+ \[\d+\]|\b0x[0-9a-fA-F]{4,}|"
    r"\S {0,3}\t")
# An error chain opening the line in lower case, as programs print it ("error: creating server: Internal - ...",
# Triton's FAIL_IF_ERR; Go's wrapped errors): a label a person types is capitalised and followed by a sentence.
_CHAIN = LazyPattern(r"^\s*(?:error|fatal|panic): [\w -]{1,40}: \S")
# Columns: a table or event row (two spaces after a full stop or comma are a typist's habit, not a column).
_COLUMNS = LazyPattern(r"[^\s.!?,;:] {2,}\S.*[^\s.!?,;:] {2,}\S|[^\s.!?,;:] {4,}\S")
_GAP = LazyPattern(r" {2,}")
_WORD = LazyPattern(r"[A-Za-z][a-z']+")
# Words that make a line a sentence rather than a list of identifiers.
_FUNCTION = frozenset({
    "the", "a", "an", "is", "are", "was", "were", "be", "been", "being", "it", "its", "we", "i", "our", "my",
    "they", "their", "this", "that", "these", "those", "and", "but", "with", "in", "on", "of", "to", "for", "after",
    "when", "keeps", "keep", "kept", "getting", "gets", "got", "get", "see", "seeing", "saw", "shows", "showed",
    "returns", "returned", "has", "have", "had", "all", "some", "every", "again", "still",
    "went", "goes", "became", "becomes", "stays", "stay", "stuck", "always", "from", "at", "just", "only", "now",
    "very", "us", "me", "you", "your", "without",
})
_TOKEN = LazyPattern(r"[A-Za-z][A-Za-z']+")
# Kana, CJK ideographs and (fix round f7) Hangul syllables: a run of them is a sentence in Japanese, Chinese or Korean,
# whose function words the English list below does not hold.
_IDEOGRAPHS = LazyPattern(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7a3]")
_SENTENCE = LazyPattern(r"(?<=[.!?])\s+")
# Where a clause starts: what comes before a term in its clause decides whether the term is negated.
# A why-clause is a clause of its own: what it asks the cause of is presupposed, so a negation or a hedge before it
# governs the verb that leads to it ("I can't explain why GPU usage stays at ~25%": the usage is 25 %).
_CLAUSE = LazyPattern(r"[,;:(]|\b(?:but|and|then|so|because|since|while|although|though|why)\b", re.IGNORECASE)
_NEGATED = LazyPattern(
    r"\b(?:not|no|never|without|instead\s+of|rather\s+than|neither|nor|none|nothing|isn't|wasn't|aren't|weren't|"
    r"doesn't|didn't|don't|hasn't|haven't|won't|can't|cannot|maybe|might|perhaps|possibly|probably|whether|if|"
    r"could|unless|expect|expected|expecting|avoid|prevent|suspect|wonder|potential|potentially|"
    r"used\s+to|formerly|previously)\b", re.IGNORECASE)  # history: what was so is not what is
# What the writer expected to happen, said as a that-clause: it did not happen ("I expected, in this case, that a 503
# is returned"). "As expected, the pod ..." names no that-clause and is not denied, nor is a that-clause after a
# "but" or "however": what was found instead ("I wanted to use all GPUs, but I found that only one works").
_EXPECTED_THAT = LazyPattern(r"\b(?:expected|expecting|expect|would expect|hoped|wanted)\b"
                             r"(?:(?!\b(?:but|however)\b)[^.!?]){0,80}?\bthat\b",
                             re.IGNORECASE)
# A program's message quoted inside a sentence: inline code, or a long quoted string. A single quote between two
# letters is an apostrophe ("don't ... doesn't"), which opens and closes no quote.
# A term as the subject of a definition ("`OOMKilled` is a SIGKILL, and thus ...", "CrashLoopBackOff means the
# container keeps exiting"): what the term is in general, said of no pod; a report puts the term after its subject
# ("the pod is OOMKilled", "the reason was OOMKilled").
_DEFINED = LazyPattern(r"^[`'\x22]?\s*(?:(?:is|are)\s+(?:(?:just|simply|basically)\s+)?an?|means|refers\s+to|"
                       r"stands\s+for)\b", re.IGNORECASE)
_QUOTED = LazyPattern(r"`[^`]+`|\"[^\"]{20,}\"|(?<![A-Za-z])'[^']{20,}'(?![A-Za-z])")
_QUOTE_MARKS = " `'\"()[],.;:"
# The line signal a fact credits (collectors/parsers/text/signals.py names it "signal:<id>").
_SIGNAL_ID = LazyPattern(r"\bsignal:([\w-]+)")
_QUOTE = LazyPattern(r"^\s*(?:>+\s*|[-*+]\s+|\d+[.)](?:\s+|(?=[A-Za-z]))|#{1,6}\s+)*")


__all__ = ["asks", "inside", "is_stated", "merged_spans", "negated", "read_stated", "restate", "sentences",
           "signal_id", "unquoted"]


def signal_id(parser: str) -> str | None:
    """The line signal a fact credits ("signal:<id>", "stated:signal:<id>", "container_log (signal:<id>)")."""
    found = _SIGNAL_ID.search(parser)
    return found.group(1) if found else None


def read_stated(artifact: Artifact, read: Iterable[tuple[int, int]] = (),
                programs: dict[int, set[str]] | None = None) -> ParseResult:
    """Facts from the sentences of the artifact; `read` are the 1-based line spans other readers already read, and
    `programs` the line signals that read a sentence (1-based line -> signal ids): the message each matched there
    is its program's words, not the writer's, and no term is read inside it."""
    text = artifact.content
    lines = text.split("\n")
    spans = merged_spans(read)
    fences = [hit.line for hit in scan(utf8(text), _FENCE)]
    terms = stated_terms()
    owners: dict[str, list[CompiledTerm]] = {}
    for term in terms:
        for hint in term.hints:
            owners.setdefault(hint, []).append(term)
    candidates = lines_holding(text, owners, per_needle=_MAX_LINES)
    facts: list[Fact] = []
    seen: set[tuple[str, str]] = set()
    for index in sorted(candidates)[:_MAX_LINES]:
        if inside(spans, index + 1) or bisect.bisect_right(fences, index) % 2 == 1:
            continue
        line = _QUOTE.sub("", lines[index][:MAX_LINE])
        if not _prose(line):
            continue
        # In catalog order, so that of two entries giving the same fact the first names it, whatever the hints.
        hinted = {id(t) for hint in candidates[index] for t in owners[hint]}
        wanted = [t for t in terms if id(t) in hinted]
        signals = sorted((programs or {}).get(index + 1, ()))
        for sentence in _SENTENCE.split(line):
            if asks(sentence):
                continue  # a question asks about the term, it does not report it
            messages = [m.span() for sid in signals if (rx := signal_pattern(sid)) is not None
                        and (m := rx.search(sentence)) is not None]
            for term in wanted:
                for name, value in _said(term, sentence, messages):
                    key = (name, repr(value))
                    if key in seen:
                        continue
                    seen.add(key)
                    facts.append(Fact(name=name, value=value,
                                      citation=Citation(artifact=artifact.id, start=index + 1, end=index + 1),
                                      excerpt=line.strip()[:200], parser=f"{STATED_PREFIX}{term.spec.id}"))
    return ParseResult(facts=facts)


def restate(artifact: Artifact, facts: list[Fact]) -> list[Fact]:
    """The line signals' facts, with those read from a sentence marked stated (`stated:<signal>`), and those read
    from a question or a negated clause dropped: "we see Xid 79 in dmesg" is said, not shown; "is it
    ImagePullBackOff?" and "there is no Xid 79" are neither."""
    if not facts:
        return facts
    lines = artifact.content.split("\n")
    fences = [hit.line for hit in scan(utf8(artifact.content), _FENCE)]
    out: list[Fact] = []
    for fact in facts:
        c = fact.citation
        index = c.start - 1
        if (c.start == 0 or c.start != c.end or index >= len(lines) or bisect.bisect_right(fences, index) % 2 == 1
                or inside(list(artifact.fenced), c.start)):
            out.append(fact)
            continue
        line = _QUOTE.sub("", lines[index][:MAX_LINE])
        wrapped = index > 0 and _wrapped_from_program(lines[index - 1], line)
        if not _prose(line) or _quoted(line, fact.value, fact.parser) or wrapped:
            out.append(fact)  # a program's line (or its wrapped tail), or its message quoted in a sentence: shown
        elif (not all(asks(s) for s in _SENTENCE.split(line) if s.strip()) and not _denied(line, fact.value)
              and not _match_denied(line, fact.parser)):
            out.append(replace(fact, parser=f"{STATED_PREFIX}{fact.parser}"))
    return _symptoms_follow_their_line(facts, out)


def _symptoms_follow_their_line(read: list[Fact], kept: list[Fact]) -> list[Fact]:
    """A symptom a signal names (`evidence.symptoms`) spells nothing of the line, so _denied cannot see it denied:
    it goes when every other fact its line gave was dropped ("there is no activator request timeout")."""
    survived = {f.citation.start for f in kept if f.name != "evidence.symptoms"}
    dropped = {f.citation.start for f in read if f.name != "evidence.symptoms"} - survived
    return [f for f in kept if f.name != "evidence.symptoms" or f.citation.start not in dropped]


def _quoted(line: str, value: object, parser: str = "") -> bool:
    """The value sits in a quoted span of the line; a value the line does not spell (true, a normalised reason):
    the message its signal matched sits in a long quoted span, or, where that cannot be told, the line quotes one.
    A long quote elsewhere in the line ("... is in CrashLoopBackOff because `AWS_REGION=REGION` ... a later
    `kubectl apply -f operator/yaml/deployment.yaml`") quotes another program, not the one the signal read."""
    found = list(_QUOTED.finditer(line))
    if not found:
        return False
    spans = [m.group() for m in found]
    items = value if isinstance(value, list) else [value]
    texts = [str(v) for v in items if not isinstance(v, bool) and str(v) and str(v) in line]
    if not texts:
        sid = signal_id(parser)
        regex = signal_pattern(sid) if sid else None
        match = regex.search(line) if regex is not None else None
        if match is not None:
            return any(m.start() <= match.start() < m.end() and len(m.group()) >= 20 for m in found)
        return any(len(span) >= 20 for span in spans)
    return any(text in span for text in texts for span in spans)


def _denied(line: str, value: object) -> bool:
    """The value a signal read sits in a negated clause of the sentence ("there is no Xid 79 in dmesg")."""
    items = value if isinstance(value, list) else [value]
    texts = [str(v) for v in items if not isinstance(v, bool) and str(v)]
    for sentence in _SENTENCE.split(line):
        for text in texts:
            at = sentence.find(text)
            if at >= 0 and negated(sentence[:at]):
                return True
    return False


def _match_denied(line: str, parser: str) -> bool:
    """The text the line signal matched sits in a negated clause ("there is no service in fail-fast"): for the facts
    whose value the line does not spell (a normalised kind, a symptom), which _denied cannot find."""
    found = _SIGNAL_ID.search(parser)
    regex = signal_pattern(found.group(1)) if found else None
    match = regex.search(line) if regex is not None else None
    if match is None:
        return False
    return negated(_SENTENCE.split(line[:match.start()])[-1])


def _values(term: CompiledTerm, sentence: str, messages: list[tuple[int, int]]) -> list[object]:
    if not term.concerns(sentence):
        return []
    quoted = [m.span() for m in _QUOTED.finditer(sentence)]
    about = [m.end() for m in term.about.finditer(sentence)] if term.about is not None else []
    lang = cjk.language(sentence)  # Chinese, Japanese and Korean deny in their own ways ("Pod 并没有处于 Pending")
    out: list[object] = []
    for match in term.regex.finditer(sentence):
        said_to = match.end() if term.spec.deny_inside else match.start()
        if lang is not None and cjk.denied_in(lang, sentence, match.start(), match.end()):
            continue
        if negated(sentence[:said_to]) or any(a <= match.start() < b and not _only_term(sentence[a:b], match.group())
                                               for a, b in quoted):
            continue  # negated, or inside a program's message the sentence quotes (its reader's to read)
        if any(a <= match.start() < b for a, b in messages):
            continue  # inside a message a line signal read: the program's words, its signal's to read
        if term.spec.terms and _DEFINED.match(sentence[match.end():]) is not None:
            continue  # the term defined, not reported
        if about and about[-1] <= match.start() and all(negated(sentence[:end]) for end in about):
            continue  # what it is about was named before it, and denied: "the pods were not evicted, X is low"
        value = _value(term, match.groupdict())
        if value is not None:
            out.append(value)
    return out


def _only_term(quote: str, matched: str) -> bool:
    """The quote holds the term and nothing else ("the pod is in `CrashLoopBackOff`", it sends "503 Service
    Temporarily Unavailable"): the writer's own word set off, not a program's longer message quoted."""
    return quote.strip(_QUOTE_MARKS).strip().lower() == matched.strip(_QUOTE_MARKS).strip().lower()


def _said(term: CompiledTerm, sentence: str, messages: list[tuple[int, int]]) -> list[tuple[str, object]]:
    """The facts a sentence says through the term: its fact, and the symptom it shows (`evidence.symptoms`)."""
    out: list[tuple[str, object]] = []
    for value in _values(term, sentence, messages):
        if term.spec.fact is not None:
            out.append((term.spec.fact, value))
        if term.spec.symptom is not None:
            out.append(("evidence.symptoms", [term.spec.symptom]))
    return out


# In a range of figures: the numbers, and where the figures stop being the GPU's (another resource is named).
_FIGURE = LazyPattern(r"(?<![\d.])(\d{1,3}(?:\.\d+)?)(?![\d.]|\s?(?:[gkm]i?b|ms|m?hz|w|x|s|gpus?|°)\b)",
                      re.IGNORECASE)
_OTHER = LazyPattern(r"\b(?:cpu|memory|mem|ram|vram|disk|io|network|while|whereas|but|batch|epoch|step|gpus?)\b",
                     re.IGNORECASE)


def _lowest(text: str) -> str | None:
    """The lowest figure of "from 98% to 0-20%", "between 0 and 100", "0%"; none above 100 (not a percentage)."""
    cut = _OTHER.search(text)
    figures = [float(m) for m in _FIGURE.findall(text[:cut.start()] if cut else text)]
    figures = [f for f in figures if f <= 100.0]
    return f"{min(figures):g}" if figures else None


def _value(term: CompiledTerm, groups: dict[str, str | None]) -> object:
    if term.spec.fact is None:
        return True  # a symptom-only entry: the sentence shows it, the symptom is the value
    kind = VOCABULARY[term.spec.fact].type
    # RE2 names a group once: a pattern of several alternatives names its figures number, number2, ...
    said = next((v for k, v in groups.items() if k.startswith("number") and v), None) or groups.get("named")
    other = groups.get("other") or groups.get("other2")
    if term.spec.mismatch and said is not None and _agree(said, other, term.spec.tolerance):
        return None  # the two figures agree: nothing is mismatched
    if kind == "bool":
        # the term itself is the observation (the NCCL watchdog timed out), unless the entry says it is false
        return term.spec.value if isinstance(term.spec.value, bool) else True
    if term.spec.value is not None:
        return [term.spec.value] if kind.startswith("list") else term.spec.value
    if term.spec.terms:
        raw: str | None = next((term.spec.terms[int(k[1:])] for k, v in groups.items() if v and k[1:].isdigit()),
                               None)
    else:
        raw = said
        if raw is not None and term.spec.lowest:
            raw = _lowest(raw)
    if raw is None:
        return None
    if kind == "float":
        return float(raw)
    if kind in ("int", "list[int]"):
        number = int(raw)
        if not term.valid(number):
            return None
        return [number] if kind.startswith("list") else number
    return [raw] if kind.startswith("list") else raw


def _agree(said: str, other: str | None, tolerance: int) -> bool:
    """Two figures of a mismatch pattern that are the same, or within the entry's tolerance of each other."""
    if other is None or not (said.isdigit() and other.isdigit()):
        return said == other
    return abs(int(said) - int(other)) <= tolerance


def asks(sentence: str) -> bool:
    """A question about what it names ("is it OOM?"), not a report followed by a bare "why?" or "any idea?"."""
    text = sentence.rstrip()
    if not text.endswith("?"):
        return False
    tail = re.split(r"[,;:]", text)[-1]
    return len(_WORD.findall(tail)) > 2


def negated(before: str) -> bool:
    """A negation or hedge in the term's own clause: "it is not OOMKilled", "no Xid 79", "maybe a 503"; or what
    the writer expected, in a that-clause however far it runs ("I expected in this case, that an error 503")."""
    starts = [m.end() for m in _CLAUSE.finditer(before)]
    clause = before[starts[-1]:] if starts else before
    return _NEGATED.search(clause) is not None or _EXPECTED_THAT.search(before) is not None


def _prose(line: str) -> bool:
    if _CHAIN.match(line):
        return False
    if (aside := _ASIDE.match(line)) is not None:
        line = aside.group(1)  # a whole line in brackets is the writer's aside: "(expected to hang since ...)"
    line = _CODE_SUBJECT.sub("It", line, count=1)
    field = _FIELD.match(line)
    if field is not None:
        line = line[field.end():]
    elif _OUTPUT.match(line):
        return False
    if (field is not None and _OUTPUT.match(line)) or _PROGRAM.search(line):
        return False
    if _COLUMNS.search(line) and not _typed_gaps(line):
        return False
    # Three words with one that only a sentence has ("pod keeps restarting", "the node went NotReady"): a short
    # sentence; a list of identifiers or a program's field has none of them.
    words = _TOKEN.findall(line)
    if len(words) >= 3 and sum(w.lower() in _FUNCTION for w in words) >= 1:
        return True
    # Chinese and Japanese write no spaces between words, so none is counted: a run of ideographs is the sentence;
    # Korean's particles and endings hang on its words, so a run of Hangul syllables is one too.
    return len(_IDEOGRAPHS.findall(line)) >= 8


# A program's long line a terminal or a log viewer wrapped at its width: the part before the wrap is wide and has no
# sentence end, and the part after it goes on mid-sentence (a small letter or a closing bracket first), which a
# sentence of the person's own never does ("... 2 Workers (tasks /" then " actors) killed due to memory pressure").
_WRAP_WIDTH = 60
_GOES_ON = LazyPattern(r"^ ?[a-z)\]}/,]")


def _wrapped_from_program(before: str, line: str) -> bool:
    before = before.rstrip()
    return (len(before) >= _WRAP_WIDTH and before[-1] not in ".!?:" and _PROGRAM.search(before) is not None
            and _GOES_ON.match(line) is not None)


def _typed_gaps(line: str) -> bool:
    """Double spaces typed inside long runs of prose ("My script is just as  https://... I  find  it's even slower"),
    not a row's cells: most stretches between the gaps hold a sentence's worth of words (cells hold one to four)."""
    cells = [len(_TOKEN.findall(cell)) for cell in _GAP.split(line.strip())]
    return sum(n > 6 for n in cells) * 2 > len(cells)


def merged_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[0] > 0):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def inside(spans: list[tuple[int, int]], line: int) -> bool:
    at = bisect.bisect_right(spans, (line, 1 << 62)) - 1
    return at >= 0 and spans[at][0] <= line <= spans[at][1]



def sentences(line: str) -> list[str]:
    """The sentences of a line, split where a full stop, a question or an exclamation mark is followed by a space."""
    return _SENTENCE.split(line)


def unquoted(line: str) -> str:
    """The line without the marks a paste puts in front of it (a quote's `>`, a list's bullet, a heading's `#`)."""
    return _QUOTE.sub("", line)
