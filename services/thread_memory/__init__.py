"""Thread memory: what the model sees of one conversation.

The recent window is read straight from the journal (20 messages at most); a
progressive summary of everything before it lives in object storage and is
cached in Redis. Redis holds no messages, only derived and coordination state.
Modules:

- ``window``: the window-size rule;
- ``summaries``: the summary object and its stores (local directory, S3) with
  compare-and-set writes;
- ``thresholds``: when a summary is due (2,000 tokens or 50 messages since the
  last one), decided from durable state;
- ``coordination``: every Redis key (cache, lock, counters, flush guard), all of
  them a cache or short-lived coordination;
- ``cached_summaries``: the current summary, from the cache or the store;
- ``upstreams``: what the flush sends agent memory (through ``libs.clients``);
- ``summarizer``, ``facts``: the model-backed and offline summarizer and fact
  extractor, with their versioned prompts in ``prompts/``;
- ``jobs``: the summarization job and its scheduler;
- ``counting``: follows the journal's change feed and counts toward thresholds;
- ``context``: GetThreadContext (and its safety net for a lost job);
- ``conversions``, ``servicer``, ``app``: the gRPC surface and its wiring.
"""
