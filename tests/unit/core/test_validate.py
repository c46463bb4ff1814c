"""User input is validated with messages that say what was expected."""

from __future__ import annotations

from datetime import timedelta

import pytest

from collectors.validate import InvalidInput, duration, namespace, object_name, target_name


@pytest.mark.parametrize("good", ["shop", "ml-team-1", "a"])
def test_good_namespaces(good: str) -> None:
    assert namespace(good) == good


@pytest.mark.parametrize("bad", ["", "Shop", "-x", "x-", "a_b", "a" * 64, 'x"}', "ns/../../etc"])
def test_bad_namespaces(bad: str) -> None:
    with pytest.raises(InvalidInput, match="expected lower-case"):
        namespace(bad)


@pytest.mark.parametrize(("text", "parsed"), [
    ("checkout", ("service", "checkout")), ("pod/trainer-0", ("pod", "trainer-0")),
    ("node/gpu-node-2.example", ("node", "gpu-node-2.example")), ("job/train", ("job", "train")),
    ("svc/web", ("service", "web")),
])
def test_target_names(text: str, parsed: tuple[str, str]) -> None:
    assert target_name(text) == parsed


@pytest.mark.parametrize(("text", "needle"), [("secret/x", "unknown target kind"), ("pod/X_Y", "not a valid"),
                                              ('web"} or vector(1)', "not a valid")])
def test_bad_targets(text: str, needle: str) -> None:
    with pytest.raises(InvalidInput, match=needle):
        target_name(text)


def test_object_name_limit() -> None:
    with pytest.raises(InvalidInput):
        object_name("a" * 254)


@pytest.mark.parametrize(("text", "value"), [("30m", timedelta(minutes=30)), ("2h", timedelta(hours=2)),
                                             ("1d", timedelta(days=1)), ("45s", timedelta(seconds=45))])
def test_durations(text: str, value: timedelta) -> None:
    assert duration(text) == value


@pytest.mark.parametrize("bad", ["", "30", "m", "0m", "8d", "-5m", "1w", "1.5h"])
def test_bad_durations(bad: str) -> None:
    with pytest.raises(InvalidInput, match="expected"):
        duration(bad)
