"""The gateway's HTTP listener: the same calls as gRPC, for MCP clients, plain HTTP and
people in a browser.

- ``server``: uvicorn on the gateway's event loop, started and stopped with it;
- ``app``: the Starlette application and its routes;
- ``calls``: runs one method of the gateway's gRPC servicers for an HTTP request
  (the servicer itself, with a small stand-in for the gRPC context), so every
  surface shares authentication, validation and handlers;
- ``rest``: ``/v1/...``, JSON <-> the gRPC request and response messages (and
  seed 002's names for ``POST /v1/memory/retrieve``);
- ``mcp``: the MCP server at ``/mcp`` (streamable HTTP), the tools of the MCP
  gateway surface;
- ``web``: the memory library page at ``/a/<account>/memory``;
- ``errors``: domain errors as HTTP statuses and JSON bodies;
- ``openapi``: the OpenAPI document of the REST routes, derived from the protos.
"""
