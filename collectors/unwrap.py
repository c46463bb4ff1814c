"""Taking the wrappers off pasted text before it is read, one line for one line.

People paste what is on their screen: inside markdown fences and quotes, after a shell prompt, behind a launcher's
rank prefix, with a note typed after a value. Every transformation here keeps the line count, so a citation into
the unwrapped text is a citation into the paste.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import re2

from collectors.lazy_regex import LazyPattern
from collectors.text import normalise

# Lines longer than this (minified JSON, a binary dump) are left as they are: no wrapper is that long, and skipping
# them keeps every pattern here linear in the paste's size.
MAX_LINE = 4096

_FENCE = LazyPattern(r"^\s*(?:`{3,}|~{3,})\s*([\w+-]*)[^`]*$")
_QUOTE = LazyPattern(r"^(?:\s{0,3}>)+ ?")
_BOLD = LazyPattern(r"\*\*|__")
_BREAK_TAG = LazyPattern(r"<br\s*/?>", re.I)
_HTML_TAG = LazyPattern(r"</?(?:details|summary|pre|code|br|p|b|i)\s*/?>", re.I)
# The command a person typed: "$ kubectl get pods", "root@node:~# dmesg -T", "[root@gpu1 ~]# cat cpu.stat",
# "(venv) user@host:~/x$ torchrun ...", "PS C:\> kubectl ...", "> kubectl ..." (PowerShell, fish), "% k get po".
_PROMPT = LazyPattern(
    r"^\s*(?:\([\w.-]+\)\s*)?"
    r"(?:\[[^\]\n]{1,80}\]|[\w.-]+@[\w.-]+(?::[^\s$#%>]{0,120})?|PS [A-Z]:[^>]{0,120}|~[^\s$#]{0,80})?"
    r"\s*(?:[$#%>\u276f]\s+|\$(?=(?:kubectl|k|oc|dmesg|cat|sudo|conntrack|nvidia-smi|journalctl)\s))(?P<cmd>\S.*)$"
)
_PROMPT_STARTS = ("$", "#", "%", ">", "(", "[", "P", "~", "\u276f")  # U+276F: the arrow zsh themes print
# A "#" or ">" prompt is only taken as one before a command word; otherwise it is a comment or a quote.
_COMMAND_WORD = LazyPattern(
    r"^(?:sudo\s+)?(?:kubectl|k|oc|dmesg|journalctl|cat|tail|head|grep|egrep|conntrack|nvidia-smi|crictl|docker|"
    r"systemctl|helm|python3?|torchrun|mpirun|srun|ls|less|watch|curl|ip|ethtool|ibstat|free|top|cd|echo|"
    r"export|sysctl|lspci|nvidia-bug-report\.sh|dcgmi|ssh|cut|awk|amtool)\b"
)
# Launcher and log-aggregator prefixes: "[1,0]<stdout>:", "[rank3]:", "[trainer3]:", "[default0]:",
# "[pod/web-1/app] " (kubectl logs --prefix), "worker-1: " (pdsh) is left alone: it is also a YAML key.
_LAUNCHER = LazyPattern(
    r"^(?:\[\d+,\d+\]<(?:stdout|stderr)>:|\[(?:rank|trainer|worker|default|node|local_rank|host)?\d+(?:\|\d+)?\]:|"
    r"\[pod/[\w.-]+/[\w.-]+\] )\s?"
)
# A note typed after a value: "nvidia.com/gpu:  7   <-- one is gone", "Reason: OOMKilled  # <- here".
_ANNOTATION = LazyPattern(r"\s{2,}(?:#\s*)?(?:<-+|<=+|←|⬅).*$|\s+(?:#\s*)?<-{2,}.*$")
# What these commands print is a program's own log, not output a person annotated: an arrow in it is the program's
# (stress's "(415) <-- worker 7 got signal 9"), so it stays.
_LOG_COMMAND = LazyPattern(r"\b(?:(?:kubectl|oc|k)\s+(?:\S+\s+)*?logs|(?:docker|podman|crictl|nerdctl)\s+logs|"
                           r"journalctl)\b")
_DIFF_LINE = LazyPattern(r"^[+\- ]")
# A "<" that can start markup or a note ("<details>", "</pre>", "<-- here"), unlike NCCL's "eth0:10.0.0.1<0>".
_MARKUP_LT = LazyPattern(r"<[-=/a-zA-Z]")
# The same two tests over a whole paste, in RE2 (one linear pass): a line that may wear a wrapper starts (after the
# spaces str.lstrip takes off) with one of _SPECIAL_STARTS, or holds markup.
_WRAPPER_START: Any = re2.compile(r"(?m)^[\t\x0b\x0c\r \x1c-\x1f\x85\pZ]*[`~>$#%(\[P+\-\x{276f}]")
_MARKUP_ANYWHERE: Any = re2.compile(r"<[-=/a-zA-Z]")


@dataclass
class Unwrapped:
    """The paste without its wrappers, and the command typed before each line (empty when none)."""

    lines: list[str]
    commands: list[str] = field(default_factory=list)
    # 1-based spans of the lines a markdown fence held (the fences themselves are blank lines now): what a paste
    # shows as a program's output, never a sentence the writer said (collectors/parsers/text/stated.py restate).
    fenced: list[tuple[int, int]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def unwrap(text: str) -> Unwrapped:
    """Remove fences, quotes, emphasis, prompts, launcher prefixes and trailing notes; keep one line per line."""
    text = normalise(text)
    lines = text.split("\n")
    if _wears_nothing(text):  # most big logs: no line needs looking at
        return Unwrapped([line if len(line) > MAX_LINE else line.rstrip() for line in lines], [""] * len(lines))
    return unwrap_lines(lines)


def unwrap_lines(lines: list[str]) -> Unwrapped:
    """The line-by-line reading behind unwrap()."""
    out: list[str] = []
    commands: list[str] = []
    fenced: list[tuple[int, int]] = []
    opened = 0  # the 1-based line of the open fence, 0 when none is open
    command = ""
    diff = False
    for line in lines:
        if len(line) > MAX_LINE or (not diff and _unwrapped(line)):
            out.append(line if len(line) > MAX_LINE else line.rstrip())  # most log lines wear no wrapper
            commands.append(command)
            continue
        if fence := _FENCE.match(line):
            if opened and len(out) > opened:
                fenced.append((opened + 1, len(out)))
            opened = 0 if opened else len(out) + 1
            diff = not diff and fence.group(1).lower() in ("diff", "patch")
            command = ""  # a fence opens or closes a block: what follows is no longer the last command's output
            out.append("")
            commands.append(command)
            continue
        line = _QUOTE.sub("", line, count=1)
        if diff and _DIFF_LINE.match(line):
            line = line[1:]
        prompt = _prompt(line)
        if prompt is not None:
            # The command stays, behind a plain "$ ": it says what follows, and its arguments can be evidence
            # (`mpirun -x NCCL_SOCKET_IFNAME=lo ...`). Parsers know a "$ " line is a command, not output.
            command = prompt
            out.append(f"$ {prompt}")
            commands.append(command)
            continue
        line = _strip_launcher(line)
        if line.startswith("`") and not line.startswith("``"):
            line = line[1:]  # an inline code span opened at the start of a pasted line
        if line.endswith("`") and not line.endswith("``") and line.count("`") % 2 == 1:
            line = line[:-1]
        markup = "<" in line and _MARKUP_LT.search(line) is not None
        if markup and _BREAK_TAG.search(line):
            # A line break inside a line (Alertmanager's e-mail puts every label on one source line, each ended by
            # <br />) separates what it stood between: a tab keeps "a = 1<br />b = 2" two pairs, not "a = 1b = 2".
            line = _BREAK_TAG.sub("\t", line)
        line = _HTML_TAG.sub("", _BOLD.sub("", line)) if ("**" in line or "__" in line or markup) else line
        if (markup or "←" in line or "⬅" in line) and not (command and _LOG_COMMAND.search(command)):
            line = _ANNOTATION.sub("", line)
        out.append(line.rstrip())
        commands.append(command)
    return Unwrapped(out, commands, fenced)


# A line can wear a wrapper only if it starts with one of these or holds one of the substrings in _plain.
_SPECIAL_STARTS = frozenset("`~>$#%([P+-\u276f")


def _unwrapped(line: str) -> bool:
    """Cheaply: the line wears no wrapper (most log lines), so the patterns need not run on it."""
    first = line.lstrip()[:1]
    if first == "[":
        # "[  12.345] NVRM: ..." is a dmesg stamp; a launcher or prompt closes its bracket with ":", "<" or a marker.
        close = line.find("]", 0, 82)
        if close != -1 and line[close + 1:close + 3].lstrip()[:1] not in ("", ":", "<", "$", "#", "%", ">", "\u276f"):
            return _plain(line)
        return False
    return first not in _SPECIAL_STARTS and _plain(line)


def _wears_nothing(text: str) -> bool:
    """Cheaply, for the whole paste: every line would pass _unwrapped, so the loop below can be skipped."""
    return ("`" not in text and "@" not in text and "**" not in text and "__" not in text and "\u2190" not in text
            and "\u2b05" not in text and _MARKUP_ANYWHERE.search(text) is None and _WRAPPER_START.search(text) is None)


def _plain(line: str) -> bool:
    return ("@" not in line[:80] and ("<" not in line or _MARKUP_LT.search(line) is None) and "`" not in line
            and "**" not in line and "__" not in line and "\u2190" not in line and "\u2b05" not in line)


def _prompt(line: str) -> str | None:
    """The command typed on a prompt line, or None when the line is not one."""
    if not line or (line.lstrip()[:1] not in _PROMPT_STARTS and "@" not in line[:80]):
        return None
    m = _PROMPT.match(line)
    if m is None:
        return None
    cmd = m.group("cmd")
    marker = line[: m.start("cmd")].rstrip()[-1:]
    if marker in ("#", ">", "%") and not _COMMAND_WORD.match(cmd):
        return None
    if marker == "$" and cmd.startswith(("{", "(")):
        return None  # "$ {" is a template, not a prompt
    return cmd.strip()


def _strip_launcher(line: str) -> str:
    if not line.startswith("["):
        return line
    for _ in range(4):  # "[1,0]<stdout>:[rank0]: ..." stacks two
        m = _LAUNCHER.match(line)
        if m is None:
            break
        line = line[m.end():]
    return line
