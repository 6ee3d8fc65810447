"""Gateway: the public surface of the platform.

- ``keys``: API keys (created by ``python -m services.gateway.admin``, stored
  hashed, each with a role) and the authentication of each call; ``callers``:
  the principal every surface sends on (account, role and key from the key);
- ``bindings``: whether Memory is bound to an agent (agent memory's setting,
  cached briefly);
- ``library``: the memory library calls for every surface, relayed to agent
  memory; ``library_servicer``: its gRPC service;
- ``threads``: the thread records the gateway owns (who owns which thread);
- ``upstreams``: the clients of the four internal services;
- ``context``: BuildContext, the ordered conversation for one turn;
- ``tools``: the tool definitions per surface and their execution;
- ``conversions``, ``servicer``, ``app``: the gRPC surface and its wiring;
- ``http``: the HTTP listener (MCP at /mcp, REST at /v1), which calls the
  servicer's own methods.
"""
