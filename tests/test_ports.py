"""Ports drawn for servers that bind them later are never handed out twice."""

from __future__ import annotations

import random

from tools.backends import ports
from tools.backends.ports import free_port, free_port_with_offset


def test_a_free_port_is_never_handed_out_twice():
    # bind(0) picks among ~14,000 ports at random: 600 draws without the
    # bookkeeping repeat one with a probability above 99.99 %.
    drawn = [free_port() for _ in range(600)]
    assert len(set(drawn)) == len(drawn)


def test_a_port_pair_never_overlaps_a_port_handed_out_before(monkeypatch):
    first = free_port_with_offset(10000)
    single = free_port()
    # The random draw proposes ports already handed out, as one of them, as its
    # partner and as a port whose partner is one, before it is let loose.
    proposals = [first, first + 10000, first - 10000, single, single - 10000]
    draw = random.randint
    monkeypatch.setattr(ports.random, "randint",
                        lambda low, high: proposals.pop(0) if proposals else draw(low, high))
    second = free_port_with_offset(10000)
    assert not proposals
    assert {second, second + 10000}.isdisjoint({first, first + 10000, single})
