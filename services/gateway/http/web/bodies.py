"""The bodies the library page's forms send, read within bounds.

Two kinds: ``application/x-www-form-urlencoded`` (every form), and
``multipart/form-data`` with one file (the import form). Either is read up to
``max_bytes`` (RESOURCE_EXHAUSTED past it) and ``MAX_FIELDS`` fields; anything
else is INVALID_ARGUMENT naming the form.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field

from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from libs.errors import InvalidArgument, ResourceExhausted

MAX_FIELDS = 100


@dataclass(frozen=True)
class Body:
    fields: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)


async def _chunks(request: Request, max_bytes: int) -> AsyncGenerator[bytes, None]:
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > max_bytes:
            raise ResourceExhausted(f"form larger than {max_bytes} bytes",
                                    reason="REQUEST_TOO_LARGE")
        yield chunk


async def read(request: Request, max_bytes: int) -> Body:
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        return await _multipart(request, max_bytes)
    data = b"".join([chunk async for chunk in _chunks(request, max_bytes)])
    try:
        pairs = urllib.parse.parse_qsl(data.decode(), keep_blank_values=True,
                                       max_num_fields=MAX_FIELDS, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise InvalidArgument("form", "not a form this page sends") from None
    return Body(dict(pairs))


async def _multipart(request: Request, max_bytes: int) -> Body:
    parser = MultiPartParser(request.headers, _chunks(request, max_bytes), max_files=1,
                             max_fields=MAX_FIELDS, max_part_size=max_bytes)
    try:
        form = await parser.parse()
    except MultiPartException:
        raise InvalidArgument("form", "not a form this page sends") from None
    fields, files = {}, {}
    try:
        for name, value in form.multi_items():
            if isinstance(value, UploadFile):
                files[name] = await value.read()
            else:
                fields[name] = value
    finally:
        await form.close()
    return Body(fields, files)
