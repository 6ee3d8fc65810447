"""End-to-end tests go through the shared platform (tests/conftest.py); Memory is bound to
one agent of each account, through the authorized settings call."""

from __future__ import annotations

import pytest

BOUND_AGENT = "concierge"  # Memory is bound to it (an agent setting)
CONTRACT_AGENT = "helper"  # ... and to this one, the agent of test_gateway_contract.py
LEARNING_AGENT = "learner"  # the agent of test_learning.py (in accounts of its own)


@pytest.fixture(scope="session", autouse=True)
def memory_bound(platform):
    for account in ("acme", "globex"):
        for agent in (BOUND_AGENT, CONTRACT_AGENT):
            platform.bind_memory(account, agent)
