"""Facts read from Alertmanager payloads and rendered alerts."""

from collectors.vocab.spec import FactSpec

FACTS: list[FactSpec] = [
    FactSpec("alert.names", "list[str]", "alert names seen", "union", "KubePodCrashLooping"),
    FactSpec("alert.symptoms", "list[str]", "symptom ids the alerts map to", "union", "crash-loop"),
    FactSpec("evidence.symptoms", "list[str]",
             "symptom ids that an upstream message read in the evidence shows (a catalog entry's `symptom:`), or "
             "that a line no reader read says by its subject and its problem (symptom_words.yaml, stated); "
             "every playbook runs on its own id here", "union", "crash-loop"),
    FactSpec("alert.status", "str", "firing or resolved", example="firing"),
    FactSpec("alert.severity", "str", "severity label", example="critical"),
    FactSpec("alert.labels", "list[str]", "every label of the alerts, as name=value", "union", "err_code=79"),
    FactSpec("alert.annotations", "list[str]", "every annotation of the alerts, as name=value", "union",
             "summary=XID 79 on gpu-node-2"),
]
