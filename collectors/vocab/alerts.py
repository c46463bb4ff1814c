"""Facts read from Alertmanager payloads and rendered alerts."""

from collectors.vocab.spec import FactSpec

FACTS: list[FactSpec] = [
    FactSpec("alert.names", "list[str]", "alert names seen", "union", "KubePodCrashLooping"),
    FactSpec("alert.symptoms", "list[str]", "symptom ids the alerts map to", "union", "crash-loop"),
    FactSpec("alert.status", "str", "firing or resolved", example="firing"),
    FactSpec("alert.severity", "str", "severity label", example="critical"),
]
