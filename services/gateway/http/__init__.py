"""The gateway's HTTP listener: the same calls as gRPC, for MCP clients and plain HTTP.

- ``server``: uvicorn on the gateway's event loop, started and stopped with it;
- ``app``: the Starlette application and its routes;
- ``calls``: runs one GatewayService method for an HTTP request (the servicer
  itself, with a small stand-in for the gRPC context), so every surface shares
  authentication, validation and handlers;
- ``rest``: ``/v1/...``, JSON <-> the gRPC request and response messages;
- ``mcp``: the MCP server at ``/mcp`` (streamable HTTP), the tools of the MCP
  gateway surface;
- ``errors``: domain errors as HTTP statuses and JSON bodies;
- ``openapi``: the OpenAPI document of the REST routes, derived from the protos.
"""
