"""A paste that ends on the ranks' "initializing distributed" announcements, with no "all processes registered"
after them, is read as ranks waiting in init_process_group (collectors/parsers/logs/dist_init.py, catalog
train_logs.yaml `dist_init`); a paste where training went on, or where every rank registered, is not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.parsers.logs import dist_init
from collectors.parsers.logs.dist_init import banners, stalled_at
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
from collectors.yaml_safe import load_file


def joined_facts(text: str) -> dict[str, object]:
    """Facts of a paste as the CLI reads it: split into its pieces, each parsed."""
    return {f.name: f.value for a in artifacts_from_text(text, "paste") for f in parse_artifact(a).facts}


def _catalog_templates() -> list[str]:
    raw = load_file(dist_init.CATALOG)
    return [str(t) for entry in raw["dist_init"] for t in entry["templates"]]


@pytest.mark.parametrize("line", _catalog_templates())
def test_every_template_is_an_announcement_and_ending_on_it_is_a_stall(line: str) -> None:
    assert any(b.joining.search(line) for b in banners()), line
    assert joined_facts(f"GPU available: True, used: True\n{line}\n").get("nccl.waiting_for_join") is True


# Real pastes of jobs that hung there, verbatim (whole lines).
REAL = {
    # https://github.com/threestudio-project/threestudio/issues/81 (four V100s, "the program gets stuck")
    "threestudio-81": (
        "[INFO] HPU available: False, using: 0 HPUs\n"
        "[rank: 0] Global seed set to 0\n"
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n"
        "[rank: 1] Global seed set to 0\n"
        "[rank: 3] Global seed set to 0\n"
        "[rank: 2] Global seed set to 0\n"
        "[rank: 3] Global seed set to 0\n"
        "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4\n"
        "[rank: 2] Global seed set to 0\n"
        "Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4\n"
        "[rank: 1] Global seed set to 0\n"
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4\n"
        "```\n"),
    # https://github.com/OpenDriveLab/Vista/issues/22 ("Code is hanging on:")
    "vista-22": (
        "```\n"
        "[rank: 0] Global seed set to 23\n"
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
        "[rank: 1] Global seed set to 23\n"
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
        "```\n"),
}


@pytest.mark.parametrize("key", sorted(REAL))
def test_real_pastes_that_hung_at_init_are_read(key: str) -> None:
    facts = joined_facts(REAL[key])
    assert facts.get("nccl.waiting_for_join") is True


def test_every_rank_registered_is_no_stall_even_at_the_end() -> None:
    # Rank 0's banner after init_process_group returned: the rendezvous completed (Lightning 1.6+ wording).
    text = ("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
            "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
            "----------------------------------------------------------------------------------------------------\n"
            "distributed_backend=nccl\nAll distributed processes registered. Starting with 2 processes\n"
            "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n")
    assert stalled_at(text.splitlines()) is None


@given(st.lists(st.text(max_size=80), max_size=30))
def test_never_raises_on_garbage(lines: list[str]) -> None:
    n = stalled_at(lines)
    assert n is None or 1 <= n <= len(lines)


def test_a_rendezvous_that_failed_after_the_announcement_is_no_stall() -> None:
    # https://github.com/pytorch/pytorch/issues/147064 (torchrun's agent restarting, then a traceback): an error
    # after the announcement is what the paste shows, not a wait.
    lines = [
        "I0213 12:07:20.086000 870572 torch/distributed/elastic/agent/server/api.py:699] "
        "[default] Stopping worker group",
        "I0213 12:07:20.087000 870572 torch/distributed/elastic/agent/server/api.py:677] "
        "[default] Rendezvous'ing worker group",
        "Traceback (most recent call last):",
        '  File "/usr/local/google/home/kiuk/.pyenv/versions/venv311/bin/torchrun", line 8, in <module>',
        "    sys.exit(main())",
    ]
    assert stalled_at(lines) is None
    assert stalled_at(lines[:2]) == 2
