"""Identifiers are single path segments: they name objects such as
accounts/{account}/agents/{agent}/threads/{thread}/summary.json."""

from __future__ import annotations

import pytest

from libs.errors import InvalidArgument
from libs.identity import require_id


@pytest.mark.parametrize("value", [".", ".."])
def test_dot_and_dot_dot_are_not_ids(value):
    with pytest.raises(InvalidArgument) as caught:
        require_id(value, "thread_id")
    assert caught.value.field == "thread_id"


@pytest.mark.parametrize("value", ["a/b", "../x", "", "x" * 129, "a b", "caf\u00e9"])
def test_anything_but_one_segment_of_the_allowed_characters_is_refused(value):
    with pytest.raises(InvalidArgument):
        require_id(value, "agent_id")


@pytest.mark.parametrize("value", ["...", ".a", "a.", "a..b", "user@example.com", "x" * 128])
def test_dots_inside_an_id_are_fine(value):
    assert require_id(value, "agent_id") == value
