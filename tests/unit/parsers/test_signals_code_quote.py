"""A program's message quoted from its source code (a string literal passed to a call) is not the program printing it:
the line-signal layer skips it (collectors/parsers/text/signals.py _IN_CODE_CALL), and still reads the same message
where a program printed it, inside a log's quotes or brackets."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.text.signals import read_signals


def _reasons(text: str) -> object:
    result = read_signals(Artifact(id="t", kind=ArtifactKind.TEXT, content=text), {})
    return {f.name: f.value for f in result.facts}.get("node.not_ready_reasons")


@pytest.mark.parametrize("line", [
    # kubernetes/kubernetes#59197 (https://github.com/kubernetes/kubernetes/issues/59197), the kubelet's code quoted
    '\t\tret = append(ret, "container runtime is down")',
    # composed: a nested call, and a logger's method
    '    errs = append(errs, fmt.Errorf("PLEG is not healthy: pleg was last seen active %v ago; threshold is %v", '
    'a, b))',
    '    klog.ErrorS(nil, "container runtime is down")',
])
def test_a_message_in_a_call_of_source_code_is_not_read(line: str) -> None:
    assert _reasons(line) is None


@pytest.mark.parametrize("line", [
    # kubernetes/kubernetes#69007 (https://github.com/kubernetes/kubernetes/issues/69007)
    "skipping pod synchronization - [container runtime is down PLEG is not healthy: pleg was last seen active "
    "2562047h47m16.854775807s ago; threshold is 3m0s]",
    # k3s-io/k3s#2370 (https://github.com/k3s-io/k3s/issues/2370)
    "Oct  8 16:29:51 worker9 k3s[1636]: E1008 16:28:34.257775    1636 kubelet.go:1846] skipping pod synchronization "
    "- PLEG is not healthy: pleg was last seen active 3m23.715837189s ago; threshold is 3m0s",
    # moby/moby#44300 (https://github.com/moby/moby/issues/44300): a Go struct printed, braces not a call
    "I1014 17:14:48.847212    2261 setters.go:555] Node became not ready: {Type:Ready Status:False "
    "LastHeartbeatTime:2022-10-14 17:14:48.847163955 -0700 PDT m=+25681.987667904 LastTransitionTime:2022-10-14 "
    "17:14:48.847163955 -0700 PDT m=+25681.987667904 Reason:KubeletNotReady Message:PLEG is not healthy: pleg was "
    "last seen active 3m8.702564418s ago; threshold is 3m0s}",
    # composed: structured klog, the message in a quoted key's value
    'E0101 10:00:00.000000    1 kubelet.go:2394] "Skipping pod synchronization" err="[container runtime is down]"',
])
def test_the_message_a_program_printed_is_read(line: str) -> None:
    assert _reasons(line), line
