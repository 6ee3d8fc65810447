"""Memories: the model of a memory, the rules over it, and the AgentMemoryService.

Domain: ``model``, ``rules``, ``permissions``, ``validation``, ``entities``, ``clock``,
``exchange`` (the JSON form); service layer: ``writes`` (every change and the rules
that decide it), ``service`` (the operations behind the RPCs), ``recall``, ``hygiene``,
``projector`` (outbox into the index); adapters: ``store`` (PostgreSQL);
gRPC: ``conversions``, ``servicer``.
"""
