"""One map between agent-memory enum names and proto values, derived from the protos."""

from __future__ import annotations

import pytest
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb

from libs import memory_names
from libs.errors import InvalidArgument


def test_every_category_and_visibility_has_its_name():
    assert memory_names.CATEGORIES == {"user_profile": pb.CATEGORY_USER_PROFILE,
                                       "project_fact": pb.CATEGORY_PROJECT_FACT,
                                       "observation": pb.CATEGORY_OBSERVATION,
                                       **{name: number for name, number in
                                          memory_names.CATEGORIES.items()
                                          if name not in ("user_profile", "project_fact",
                                                          "observation")}}
    assert memory_names.VISIBILITIES["private"] == pb.VISIBILITY_PRIVATE
    assert memory_names.VISIBILITIES["shared"] == pb.VISIBILITY_SHARED
    unspecified = {pb.CATEGORY_UNSPECIFIED, pb.VISIBILITY_UNSPECIFIED}
    assert not unspecified & {*memory_names.CATEGORIES.values(),
                              *memory_names.VISIBILITIES.values()}
    for name, number in memory_names.CATEGORIES.items():
        assert memory_names.category_name(memory_names.category(name)) == name == \
            pb.Category.Name(number).removeprefix("CATEGORY_").lower()


def test_unknown_names_are_invalid_arguments_naming_the_field():
    with pytest.raises(InvalidArgument) as caught:
        memory_names.category("nope", "arguments.category")
    assert caught.value.field == "arguments.category"
    with pytest.raises(InvalidArgument):
        memory_names.visibility("public")
