"""The protos' comments at run time: the one source of the API's documentation.

``make proto`` writes every proto with its comments into
``agentmemory/descriptors.binpb`` (a FileDescriptorSet with source info) beside the
generated code. From it come the OpenAPI document's descriptions, required fields and
examples (``services/gateway/http/openapi.py``), and the files gRPC reflection serves
(``DocumentedReflection``), so ``grpcurl describe`` shows the same comments.

Conventions in the comments: a field whose comment starts with "Required" is required;
a line ``Example: <JSON value>`` gives an example (and is left out of the description).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import _async as reflection_aio

_EXAMPLE = re.compile(r"^\s*Example:\s*(.+?)\s*$", re.MULTILINE)
# FileDescriptorProto / DescriptorProto / ServiceDescriptorProto field numbers in paths.
_MESSAGES, _ENUMS, _SERVICES = 4, 5, 6
_FIELDS, _NESTED, _NESTED_ENUMS, _VALUES, _METHODS = 2, 3, 4, 2, 2


@dataclass(frozen=True)
class Doc:
    text: str  # the comment, without its example line
    example: Any = None
    has_example: bool = False

    @property
    def required(self) -> bool:
        return self.text.startswith("Required")


@functools.cache
def descriptor_set() -> descriptor_pb2.FileDescriptorSet:
    data = (resources.files("agentmemory") / "descriptors.binpb").read_bytes()
    return descriptor_pb2.FileDescriptorSet.FromString(data)


@functools.cache
def docs() -> dict[str, Doc]:
    """Full name (``pkg.Message``, ``pkg.Message.field``, ``pkg.Service.Method``, enum
    values as ``pkg.Enum.VALUE``) -> its leading comment."""
    found: dict[str, Doc] = {}
    for file in descriptor_set().file:
        comments = {tuple(location.path): location.leading_comments
                    for location in file.source_code_info.location
                    if location.leading_comments}
        prefix = file.package
        for index, message in enumerate(file.message_type):
            _message(found, comments, (_MESSAGES, index), f"{prefix}.{message.name}", message)
        for index, enum in enumerate(file.enum_type):
            _enum(found, comments, (_ENUMS, index), f"{prefix}.{enum.name}", enum)
        for index, service in enumerate(file.service):
            name = f"{prefix}.{service.name}"
            _note(found, comments, (_SERVICES, index), name)
            for position, method in enumerate(service.method):
                _note(found, comments, (_SERVICES, index, _METHODS, position),
                      f"{name}.{method.name}")
    return found


def doc(full_name: str) -> Doc | None:
    return docs().get(full_name)


def _message(found, comments, path, name, message) -> None:
    _note(found, comments, path, name)
    for index, field in enumerate(message.field):
        _note(found, comments, (*path, _FIELDS, index), f"{name}.{field.name}")
    for index, nested in enumerate(message.nested_type):
        _message(found, comments, (*path, _NESTED, index), f"{name}.{nested.name}", nested)
    for index, enum in enumerate(message.enum_type):
        _enum(found, comments, (*path, _NESTED_ENUMS, index), f"{name}.{enum.name}", enum)


def _enum(found, comments, path, name, enum) -> None:
    _note(found, comments, path, name)
    for index, value in enumerate(enum.value):
        _note(found, comments, (*path, _VALUES, index), f"{name}.{value.name}")


def _note(found, comments, path, name) -> None:
    text = comments.get(tuple(path))
    if text is None:
        return
    text = " ".join(line.strip() for line in text.strip().splitlines())
    match = _EXAMPLE.search(text.replace(". Example:", ".\nExample:"))
    if match is None:
        found[name] = Doc(text)
        return
    described = text[:text.index("Example:")].strip()
    found[name] = Doc(described, json.loads(match.group(1)), True)


@functools.cache
def _serialized_files() -> dict[str, bytes]:
    return {file.name: file.SerializeToString() for file in descriptor_set().file}


class DocumentedReflection(reflection_aio.ReflectionServicer):
    """gRPC server reflection whose files carry their comments: the generated modules'
    descriptors have none, so each file is answered with its copy from the set."""

    async def ServerReflectionInfo(self, request_iterator, context):
        # typeshed types the base method as a coroutine; it is an async generator
        async for response in super().ServerReflectionInfo(  # type: ignore[attr-defined]
                request_iterator, context):
            if response.HasField("file_descriptor_response"):
                files = response.file_descriptor_response.file_descriptor_proto
                documented = [_with_comments(data) for data in files]
                del files[:]
                files.extend(documented)
            yield response


def _with_comments(data: bytes) -> bytes:
    name = descriptor_pb2.FileDescriptorProto.FromString(data).name
    return _serialized_files().get(name, data)
