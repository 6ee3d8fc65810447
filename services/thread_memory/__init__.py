"""Thread memory: what the model sees of one conversation.

The recent window is read straight from the journal (20 messages at most); a
progressive summary of everything before it lives in object storage and is
cached in Redis. Redis holds no messages, only derived and coordination state.
Modules:

- ``window``: the window-size rule;
- ``summaries``: the summary object and its stores (local directory, S3) with
  compare-and-set writes;
- ``coordination``: every Redis key (cache, lock, counters, guard, claims);
- ``upstreams``: the journal and agent-memory clients;
- ``summarizer``, ``facts``: the model-backed and offline summarizer and fact
  extractor, with their versioned prompts in ``prompts/``;
- ``jobs``: the summarization job and its scheduler;
- ``counting``: follows the journal's change feed and counts toward thresholds;
- ``context``: GetThreadContext;
- ``conversions``, ``servicer``, ``app``: the gRPC surface and its wiring.
"""
