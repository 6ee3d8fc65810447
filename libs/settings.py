"""Typed, frozen settings read from environment variables.

A settings class is a frozen dataclass whose fields are declared with
:func:`setting`, naming the variable and saying what it is for. ``load`` reads
the variables (with an optional prefix), converts them to the field's type and
names the variable in the error when a value does not parse. ``describe``
lists every variable, for the configuration table of docs/configuration.md.
"""

from __future__ import annotations

import dataclasses
import os
import re
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class SettingsError(ValueError):
    """A variable is set to a value its setting cannot take."""


class Secret:
    """A string that never shows itself in logs, reprs or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return "Secret('***')" if self._value else "Secret('')"

    __str__ = __repr__


def setting(env: str, default: Any, doc: str) -> Any:
    """Declare a field read from the variable ``env`` (after the class prefix)."""
    if isinstance(default, list | dict | set):
        raise TypeError("mutable defaults are not allowed in settings")
    return dataclasses.field(default=default, metadata={"env": env, "doc": doc})


@dataclass(frozen=True)
class Variable:
    name: str
    default: Any
    doc: str


def load(cls: type[T], *, prefix: str = "", environ: Mapping[str, str] | None = None) -> T:
    """Build ``cls`` from ``environ`` (default: the process environment)."""
    environ = os.environ if environ is None else environ
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        name = prefix + field.metadata["env"]
        raw = environ.get(name)
        if raw is None or (raw == "" and hints[field.name] is not str):
            continue  # unset; an empty string is a value only for a text setting
        try:
            values[field.name] = _convert(raw, hints[field.name])
        except ValueError as exc:
            raise SettingsError(f"{name}: {exc}") from None
    try:
        return cls(**values)
    except ValueError as exc:
        # Validation messages name variables without the service prefix.
        message = str(exc)
        for field in dataclasses.fields(cls):  # type: ignore[arg-type]
            name = field.metadata["env"]
            message = re.sub(rf"(?<![A-Z_]){name}\b", prefix + name, message)
        raise SettingsError(message) from None


def describe(cls: type, *, prefix: str = "") -> Iterator[Variable]:
    """The variables ``cls`` reads, with defaults and documentation."""
    for field in dataclasses.fields(cls):
        yield Variable(prefix + field.metadata["env"], field.default, field.metadata["doc"])


def _convert(raw: str, kind: Any) -> Any:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(kind) if a is not type(None)]
        return _convert(raw, inner)
    if origin is typing.Literal:
        allowed = typing.get_args(kind)
        if raw not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}, got {raw!r}")
        return raw
    if kind is bool:
        lowered = raw.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError(f"expected a boolean (true/false), got {raw!r}")
    if kind is int:
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"expected an integer, got {raw!r}") from None
    if kind is float:
        try:
            return float(raw)
        except ValueError:
            raise ValueError(f"expected a number, got {raw!r}") from None
    if kind is Path:
        return Path(raw)
    if kind is Secret:
        return Secret(raw)
    if kind is str:
        return raw
    raise TypeError(f"unsupported setting type {kind!r}")
