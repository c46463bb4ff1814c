"""A 403 from the API server as what it is: evidence the bot was not allowed to read, and the rule that would
allow it. The API server's message names the verb, resource, group and namespace; we say them back as the RBAC
rule a person would add, instead of passing on the raw Forbidden text.
"""

from __future__ import annotations

from collectors.lazy_regex import LazyPattern

# `User "system:serviceaccount:triagebot:triagebot" cannot get resource "nodes/proxy" in API group "" at the
# cluster scope` / `... in the namespace "kube-system"` (k8s.io/apiserver's forbidden message).
_FORBIDDEN = LazyPattern(r'cannot (?P<verb>[a-z]+) resource "(?P<resource>[^"]+)" in API group "(?P<group>[^"]*)"'
                         r'(?: in the namespace "(?P<namespace>[^"]+)")?')
# Grants the deployment ships as opt-in components (deploy/kustomize/components/), by resource.
_COMPONENTS = {"nodes/proxy": "the kubelet-logs component grants it, or set kubelet_logs: false"}
# Withheld on purpose (docs/install.md, "RBAC"): say so rather than suggest a grant.
_BY_DESIGN = {"secrets": "triagebot's RBAC never reads secrets", "configmaps": "triagebot's RBAC never reads "
              "configmaps", "pods/exec": "triagebot never execs into pods"}


def forbidden_reason(message: str) -> str | None:
    """"not granted: RBAC rule ..." for a Forbidden message the API server wrote; None for any other text."""
    found = _FORBIDDEN.search(message)
    if found is None:
        return None
    verb, resource, group = found["verb"], found["resource"], found["group"]
    where = f" in namespace {found['namespace']}" if found["namespace"] else ""
    rule = f'apiGroups: ["{group}"], resources: ["{resource}"], verbs: ["{verb}"]'
    how = (_BY_DESIGN.get(resource) or _COMPONENTS.get(resource)
           or f"a {'Role' if where else 'ClusterRole'} rule {{{rule}}} grants it")
    return f"not granted: {verb} {resource}{where} ({how})"
