"""Page tokens: one format for every list, and what a token of another shape gets."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from uuid import uuid4

import pytest

from libs import page_tokens
from libs.errors import InvalidArgument


def _raw(**state) -> str:
    """A token of any content, as a client could forge one."""
    return base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("=")


def test_a_time_position_comes_back_as_it_went_in():
    at, item = datetime(2026, 12, 1, 23, 59, 59, 123456, tzinfo=UTC), uuid4()
    assert page_tokens.time_position(page_tokens.time_token(at, item)) == (at, item)
    assert page_tokens.time_position("") is None
    assert page_tokens.id_position(page_tokens.id_token(41)) == 41
    assert page_tokens.id_position("") is None


@pytest.mark.parametrize("token", [
    _raw(v=1, t="2026-12-01T00:00:00+00:00", i=str(uuid4())),  # the Learning tab's old shape
    _raw(v=1, after="yesterday", id=str(uuid4())),
    _raw(v=1, after="2026-12-01T00:00:00+00:00", id="not-a-uuid"),
    _raw(v=2, after="2026-12-01T00:00:00+00:00", id=str(uuid4())),
    "%%%",
])
def test_a_time_token_of_another_shape_is_invalid_naming_the_field(token):
    with pytest.raises(InvalidArgument) as refused:
        page_tokens.time_position(token)
    assert refused.value.field == "page_token"
    assert refused.value.description == page_tokens.NOT_OURS


@pytest.mark.parametrize("before", [-1, 2**63, True, "7", 1.5])
def test_a_forged_id_is_refused_before_it_reaches_a_query(before):
    with pytest.raises(InvalidArgument):
        page_tokens.id_position(_raw(v=1, before=before))


def test_only_a_full_page_has_a_next_token():
    assert page_tokens.next_token([1, 2, 3], 3, str) == "3"
    assert page_tokens.next_token([1, 2], 3, str) == ""
    assert page_tokens.next_token([], 3, str) == ""
