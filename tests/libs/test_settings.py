from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from libs.settings import Secret, SettingsError, describe, load, setting


@dataclass(frozen=True)
class Example:
    port: int = setting("PORT", 8080, "port")
    ratio: float = setting("RATIO", 0.5, "ratio")
    verbose: bool = setting("VERBOSE", False, "verbose")
    mode: Literal["a", "b"] = setting("MODE", "a", "mode")
    root: Path = setting("ROOT", Path("data"), "root")
    token: Secret = setting("TOKEN", Secret(""), "token")


def test_defaults_and_conversions():
    assert load(Example, environ={}) == Example()
    loaded = load(Example, prefix="X_", environ={
        "X_PORT": "9", "X_RATIO": "0.25", "X_VERBOSE": "yes", "X_MODE": "b", "X_ROOT": "/tmp/r",
        "X_TOKEN": "hunter2", "PORT": "1",
    })
    assert (loaded.port, loaded.ratio, loaded.verbose, loaded.mode, loaded.root) == (
        9, 0.25, True, "b", Path("/tmp/r"))
    assert loaded.token.reveal() == "hunter2"


@pytest.mark.parametrize("name, value, words", [
    ("X_PORT", "eighty", "integer"),
    ("X_VERBOSE", "maybe", "boolean"),
    ("X_MODE", "c", "one of a, b"),
    ("X_RATIO", "lots", "number"),
])
def test_bad_values_name_the_variable(name, value, words):
    with pytest.raises(SettingsError) as caught:
        load(Example, prefix="X_", environ={name: value})
    assert name in str(caught.value) and words in str(caught.value)


def test_settings_are_frozen_and_secrets_never_print():
    loaded = load(Example, environ={"TOKEN": "hunter2"})
    with pytest.raises(AttributeError):
        loaded.port = 1  # type: ignore[misc]
    assert "hunter2" not in repr(loaded) and "hunter2" not in str(loaded.token)
    assert "hunter2" not in f"{loaded}"


def test_describe_lists_every_variable():
    names = [v.name for v in describe(Example, prefix="X_")]
    assert names == ["X_PORT", "X_RATIO", "X_VERBOSE", "X_MODE", "X_ROOT", "X_TOKEN"]
