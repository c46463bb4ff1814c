"""Error responses exactly as the API server (or a kubelet behind its proxy) writes them.

API-server errors are `Status` objects built the way apimachinery's `errors.New*` helpers build them, field for
field and in Go's field order. Kubelet errors pass through the node proxy as the kubelet wrote them: plain text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.standins.kube_catalog import Resource, dumps


@dataclass
class ApiError(Exception):
    """A response other than success; `body` is what goes on the wire."""

    code: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def status_error(code: int, reason: str, message: str, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None, continue_token: str = "") -> ApiError:
    doc: dict[str, Any] = {"kind": "Status", "apiVersion": "v1",
                           "metadata": {"continue": continue_token} if continue_token else {},
                           "status": "Failure", "message": message}
    if reason:
        doc["reason"] = reason
    if details is not None:
        doc["details"] = details
    doc["code"] = code
    return ApiError(code, dumps(doc), headers=headers or {})


def kubelet_text(code: int, text: str) -> ApiError:
    """http.Error() in the kubelet: text plus newline, passed through the API server's proxy unchanged."""
    return ApiError(code, (text + "\n").encode(), "text/plain; charset=utf-8", {"X-Content-Type-Options": "nosniff"})


def _details(res: Resource | None, name: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if name:
        out["name"] = name
    if res is not None:
        if res.group:
            out["group"] = res.group
        out["kind"] = res.plural
    return out


def not_found(res: Resource, name: str) -> ApiError:
    return status_error(404, "NotFound", f'{res.qualified} "{name}" not found', _details(res, name))


def no_such_resource() -> ApiError:
    """An unknown path or a resource type the cluster does not have (e.g. a CRD that is not installed)."""
    return status_error(404, "NotFound", "the server could not find the requested resource", {})


def bad_request(message: str) -> ApiError:
    return status_error(400, "BadRequest", message)


def invalid(kind: str, name: str, causes: list[tuple[str, str]]) -> ApiError:
    """422 Invalid; causes are (field, "Invalid value: ...: why") pairs."""
    summary = ", ".join(f"{f}: {m}" if f else m for f, m in causes)
    if len(causes) > 1:
        summary = f"[{summary}]"
    details = {"name": name, "kind": kind,
               "causes": [{"reason": "FieldValueInvalid", "message": m, "field": f} for f, m in causes]}
    return status_error(422, "Invalid", f'{kind} "{name}" is invalid: {summary}', details)


def unauthorized() -> ApiError:
    return status_error(401, "Unauthorized", "Unauthorized")


@dataclass(frozen=True)
class Attributes:
    """What the authorizer sees: verb, resource, subresource, name, namespace, or a non-resource path."""

    verb: str
    path: str
    resource: Resource | None = None
    subresource: str = ""
    name: str = ""
    namespace: str = ""


def forbidden(attrs: Attributes, user: str) -> ApiError:
    res = attrs.resource
    if res is None:
        return status_error(403, "Forbidden", f'forbidden: User "{user}" cannot {attrs.verb} path "{attrs.path}"', {})
    resource = f"{res.plural}/{attrs.subresource}" if attrs.subresource else res.plural
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    why = f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{res.group}" {where}'
    subject = f'{res.qualified} "{attrs.name}"' if attrs.name else res.qualified
    return status_error(403, "Forbidden", f"{subject} is forbidden: {why}", _details(res, attrs.name))


def expired(message: str = "The resourceVersion for the provided list is too old.", token: str = "") -> ApiError:
    return status_error(410, "Expired", message, continue_token=token)


def too_many_requests(retry_after: int) -> ApiError:
    # The priority-and-fairness filter's rejection.
    return status_error(429, "TooManyRequests", "Too many requests, please try again later.",
                        {"retryAfterSeconds": retry_after}, {"Retry-After": str(retry_after)})


def internal(cause: str) -> ApiError:
    return status_error(500, "InternalError", f"Internal error occurred: {cause}", {"causes": [{"message": cause}]})


def unavailable(message: str) -> ApiError:
    return status_error(503, "ServiceUnavailable", message)


def timeout() -> ApiError:
    return status_error(504, "Timeout", "Timeout: request did not complete within the allotted timeout", {})


def method_not_supported(verb: str, res: Resource | None) -> ApiError:
    kind = res.qualified if res else "unknown"
    return status_error(405, "MethodNotAllowed", f'{verb} is not supported on resources of kind "{kind}"',
                        _details(res))
