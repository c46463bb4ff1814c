"""The optional language model and the runbook search: narratives, interview grading and /ask.

Nothing here decides a verdict. The engine's statuses are computed before a model sees the report, and every
generated text passes a guard or is replaced by the deterministic text.
"""
