"""Retrieval (seed 002): RetrieveContext and RelevantMemories.

- ``model``: what the legs find and the receipts keep; ``request``, ``params``,
  ``view`` (which state of the store a retrieval reads);
- ``search`` (the legs), ``fusion``, ``scoring``, ``trust``, ``rerank``: the ranked
  memories; ``compiler`` and ``render``: the token-budgeted context;
  ``episodes``, ``procedures``: what else a context holds;
- ``store``: the SQL; ``service``: the operations behind the RPCs;
  ``conversions``/``servicer``: the gRPC RetrievalService.
"""
