"""`tolerates(pod.tolerations, taint)`: a CEL function, since CEL cannot take the fact strings apart.

Taints read as `key=value:Effect` (or `key:Effect`), tolerations as `key=value:Effect` (Equal), `key:Effect`
(Exists), either without `:Effect` (any effect), and `*` for the empty key with Exists (every key)."""

from __future__ import annotations

from collections.abc import Iterable


def _split(text: str) -> tuple[str, str | None, str]:
    """(key, value or None when absent, effect or '' when absent)."""
    head, colon, effect = text.rpartition(":")
    if not colon:
        head, effect = text, ""
    key, equals, value = head.partition("=")
    return key, (value if equals else None), effect


def tolerates(tolerations: Iterable[object], taint: object) -> bool:
    """True when one of the pod's tolerations covers the node taint, by Kubernetes' matching rules."""
    key, value, effect = _split(str(taint))
    for text in tolerations:
        t_key, t_value, t_effect = _split(str(text))
        if t_effect and t_effect != effect:
            continue
        if t_key == "*" or (t_key == key and (t_value is None or t_value == (value or ""))):
            return True
    return False
