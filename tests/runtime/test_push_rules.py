"""The webhook delivery rules as pure values: what a status means, when another attempt
follows, how long to wait; and that their module does no I/O, waits for nothing, reads no
clock and logs nothing (the rules are the same whoever makes the attempts)."""

from __future__ import annotations

import ast
import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core.server import DeliveryOutcome, DeliveryRules, WebhookPushSender, _delivery_rules
from a2a_core.server.backends import DeliveryRules as SeamRules

DELIVERED, RETRY, GIVE_UP = (
    DeliveryOutcome.DELIVERED,
    DeliveryOutcome.RETRY,
    DeliveryOutcome.GIVE_UP,
)


def no_jitter(low: float, high: float) -> float:
    """A random draw fixed at the middle of its range: the factor 1."""
    return (low + high) / 2


def test_the_defaults_are_the_senders() -> None:
    rules = DeliveryRules()
    assert (rules.retries, rules.backoff, rules.factor, rules.max_backoff, rules.jitter) == (
        3,
        0.5,
        2.0,
        30.0,
        0.1,
    )
    assert WebhookPushSender().rules == rules
    assert SeamRules is DeliveryRules


def test_a_sender_takes_its_rules_from_its_options() -> None:
    sender = WebhookPushSender(retries=5, backoff=1, max_backoff=4, jitter=0)
    assert sender.rules == DeliveryRules(retries=5, backoff=1, max_backoff=4, jitter=0)
    assert sender.poster.rules is sender.rules


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (200, DELIVERED),
        (201, DELIVERED),
        (204, DELIVERED),
        (299, DELIVERED),
        (100, GIVE_UP),
        (199, GIVE_UP),
        (301, GIVE_UP),  # redirects are never followed
        (304, GIVE_UP),
        (400, GIVE_UP),
        (401, GIVE_UP),
        (404, GIVE_UP),
        (409, GIVE_UP),
        (410, GIVE_UP),
        (499, GIVE_UP),
        (408, RETRY),
        (429, RETRY),
        (500, RETRY),
        (503, RETRY),
        (599, RETRY),
    ],
)
def test_what_a_status_means(status: int, outcome: DeliveryOutcome) -> None:
    assert DeliveryRules().outcome_of(status) is outcome


@pytest.mark.parametrize(
    ("retries", "attempt", "outcome", "another"),
    [
        (3, 0, RETRY, True),
        (3, 2, RETRY, True),
        (3, 3, RETRY, False),  # the fourth attempt was the last
        (0, 0, RETRY, False),
        (3, 0, GIVE_UP, False),
        (3, 0, DELIVERED, False),
    ],
)
def test_when_another_attempt_follows(
    retries: int, attempt: int, outcome: DeliveryOutcome, another: bool
) -> None:
    assert DeliveryRules(retries=retries).another_attempt(attempt, outcome) is another


@pytest.mark.parametrize(
    ("options", "delays"),
    [
        ({}, [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]),
        ({"backoff": 1, "max_backoff": 4}, [1, 2, 4, 4, 4, 4, 4, 4]),
        ({"backoff": 1, "factor": 3}, [1, 3, 9, 27, 30, 30, 30, 30]),
        ({"backoff": 2, "factor": 1}, [2] * 8),
        ({"backoff": 0}, [0] * 8),
        ({"backoff": 5, "max_backoff": 1}, [1] * 8),  # a cap below the first wait
    ],
)
def test_the_waits(options: dict[str, Any], delays: list[float]) -> None:
    rules = DeliveryRules(**options)
    assert [rules.delay(n, no_jitter) for n in range(8)] == delays
    assert [rules.base_delay(n) for n in range(8)] == delays


def test_the_jitter_spreads_each_wait_by_its_fraction() -> None:
    rules = DeliveryRules(backoff=1, jitter=0.25)
    assert rules.delay(2, lambda low, high: low) == 3.0
    assert rules.delay(2, lambda low, high: high) == 5.0
    draws: list[tuple[float, float]] = []
    rules.delay(0, lambda low, high: draws.append((low, high)) or low)
    assert draws == [(0.75, 1.25)]
    # Without a draw given, the random one: within the bounds, and not always the same.
    waits = {DeliveryRules(backoff=1, jitter=0.5).delay(0) for _ in range(50)}
    assert all(0.5 <= wait <= 1.5 for wait in waits)
    assert len(waits) > 1


def test_a_far_attempt_waits_the_cap() -> None:
    # 2.0 ** 5000 overflows a float: the wait is the cap, not an error.
    assert DeliveryRules().delay(5000, no_jitter) == 30.0
    assert DeliveryRules(backoff=0).delay(5000, no_jitter) == 0.0


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"retries": -1}, "retries"),
        ({"retries": 1.5}, "retries"),
        ({"retries": True}, "retries"),
        ({"backoff": -0.1}, "backoff"),
        ({"backoff": math.nan}, "backoff"),
        ({"backoff": math.inf}, "backoff"),
        ({"backoff": "1"}, "backoff"),
        ({"max_backoff": -1}, "max_backoff"),
        ({"max_backoff": math.inf}, "max_backoff"),
        ({"factor": 0.5}, "factor"),
        ({"factor": math.nan}, "factor"),
        ({"jitter": -0.1}, "jitter"),
        ({"jitter": 1.5}, "jitter"),
        ({"jitter": math.nan}, "jitter"),
    ],
)
def test_a_wrong_option_is_refused_by_name(options: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=f"^{named} must"):
        DeliveryRules(**options)


def test_the_rules_are_a_frozen_value() -> None:
    rules = DeliveryRules(retries=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.retries = 2  # type: ignore[misc]
    assert rules == DeliveryRules(retries=1)
    assert hash(rules) == hash(DeliveryRules(retries=1))
    assert rules != DeliveryRules(retries=2)
    with pytest.raises(TypeError):
        DeliveryRules(1)  # type: ignore[misc]  # keywords only: which number is which


RULES = st.builds(
    DeliveryRules,
    retries=st.integers(0, 50),
    backoff=st.floats(0, 100, allow_nan=False),
    factor=st.floats(1, 10, allow_nan=False),
    max_backoff=st.floats(0, 1000, allow_nan=False),
    jitter=st.floats(0, 1, allow_nan=False),
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rules=RULES, draw=st.floats(0, 1), attempts=st.integers(1, 2000))
def test_waits_never_shrink_never_pass_the_cap_and_stay_within_the_jitter(
    rules: DeliveryRules, draw: float, attempts: int
) -> None:
    def uniform(low: float, high: float) -> float:
        return low + (high - low) * draw  # one fixed point of the jitter's range

    last = 0.0
    for attempt in sorted({0, 1, 2, attempts // 2, attempts - 1, attempts}):
        base = rules.base_delay(attempt)
        assert last <= base <= rules.max_backoff
        if rules.backoff <= rules.max_backoff:
            assert base >= rules.backoff  # the first wait is the smallest
        wait = rules.delay(attempt, uniform)
        low, high = base * (1 - rules.jitter), base * (1 + rules.jitter)
        assert low - 1e-9 * high <= wait <= high * (1 + 1e-9)
        assert math.isfinite(wait) and wait >= 0
        last = base


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rules=RULES)
def test_every_status_has_one_of_the_three_outcomes(rules: DeliveryRules) -> None:
    outcomes = {status: rules.outcome_of(status) for status in range(100, 600)}
    assert set(outcomes.values()) == {DELIVERED, RETRY, GIVE_UP}
    assert {s for s, o in outcomes.items() if o is DELIVERED} == set(range(200, 300))
    assert {s for s, o in outcomes.items() if o is RETRY} == {408, 429, *range(500, 600)}
    # Only an outcome worth one is followed by another attempt, and never past the retries.
    for outcome in DeliveryOutcome:
        followed = [n for n in range(rules.retries + 2) if rules.another_attempt(n, outcome)]
        assert followed == (list(range(rules.retries)) if outcome is RETRY else [])


# What the rules' module may import: nothing that does I/O, waits, reads a clock or logs.
ALLOWED_IMPORTS = {
    "__future__",
    "math",
    "random",
    "collections.abc",
    "dataclasses",
    "enum",
    "typing",
}


def test_the_rules_module_is_pure() -> None:
    path = Path(_delivery_rules.__file__)
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "the rules import nothing of the package"
            imported.add(node.module or "")
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "random"
        ):
            # random's module-level generator is the default draw: only its uniform.
            assert node.attr == "uniform", f"random.{node.attr}"
    assert imported <= ALLOWED_IMPORTS, imported - ALLOWED_IMPORTS
