"""The fact vocabulary, one module per evidence domain.

Each module exports FACTS: a list of FactSpec. Playbooks may only name facts listed here;
docs/facts.md is rendered from these lists.
"""
