"""The numbers of RetrieveContext (seed 002), in one place.

Request bounds and defaults, fusion, the five score factors and their
normalisations, the adaptive threshold, trust and its parts. Every one is
documented in docs/retrieval.md (trust in docs/concepts.md); tests check the arithmetic
against hand-computed values.
"""

from __future__ import annotations

import math
from datetime import timedelta

from services.agent_memory.memories import rules

# -- the request ------------------------------------------------------------------

TOP_N_DEFAULT = 40
TOP_N_RANGE = (1, 100)  # clamped, not refused (seed: "Clamped to 1-100")
TOKEN_BUDGET_RANGE = rules.SETTINGS_TOKEN_BUDGET_RANGE  # 256-32000, refused outside
MAX_QUERY_CHARS = 2000
# BuildContext's relevant memories: the search asks for one memory per this many tokens
# of the block's budget (10 at the default 1,000; a line of bench.retrieval_bench's
# memories is 41 tokens). Each memory the legs return costs the filter and the score:
# asking for 10 rather than 25 took 40% off the retrieval at 10k memories.
RELEVANT_TOKENS_PER_MEMORY = 100
# A query of at most this many words naming a kind is routed to that kind's list.
ROUTE_MAX_WORDS = 5

# -- the legs ---------------------------------------------------------------------

LEGS = ("vector", "fulltext", "entity", "episode", "graph", "type")
LEG_LABELS = {"vector": "Vector", "fulltext": "FullText", "entity": "Entity",
              "episode": "Episode", "graph": "Graph", "type": "Type"}
# Fit on the tuning splits of bench/retrieval_quality.py (conversation turns and short
# facts; docs/benchmarks.md has the figures and the ablation): the vector leg counts double, the
# keyword leg half; the entity leg at 1 and the graph leg at all cost rank on both kinds
# of data; the episode and type legs find nothing there, so nothing shows they earn 1.
LEG_WEIGHTS = {"vector": 2.0, "fulltext": 0.5, "entity": 0.5, "episode": 0.5, "graph": 0.0,
               "type": 0.5}
# The keyword leg keeps the hits scoring at least this fraction of its best BM25 score: a
# memory sharing one common word with the query is not a match worth a rank.
KEYWORD_FLOOR = 0.2


def leg_depth(top_n: int) -> int:
    """How many candidates each leg contributes: enough that filters rarely starve the
    top N, few enough that every leg stays an index scan."""
    return min(200, max(20, 2 * top_n))


GRAPH_SEEDS = 5  # the top vector hits the 2-hop expansion starts from
GRAPH_MAX_ENTITY_FANOUT = 200  # entities shared by more memories than this are not walked
EPISODES_MATCHED = 10  # episodes whose sentences the episode leg keeps
RELEVANT_EPISODES = 3  # episodes the compiler offers (section relevantEpisodes)
RUN_MEMORIES_MAX = 50
PROFILE_MAX = rules.RULES[rules.Kind.USER_PROFILE].per_user
RULES_MAX = rules.RULES[rules.Kind.PLATFORM_RULE].per_agent

# -- fusion and score ---------------------------------------------------------------

RRF_K = 60  # seed: reciprocal-rank fusion with k = 60; a leg's rank r (from 0) adds
#             weight / (k + r + 1)
FACTOR_WEIGHTS = {"rrf": 0.35, "recency": 0.15, "accessFreq": 0.10, "importance": 0.30,
                  "confidence": 0.10}
# Recency decays exponentially from creation (or from temporal_anchor):
# value = 0.5 ** (age / half-life).
RECENCY_HALF_LIFE = timedelta(days=30)
# accessFreq = ln(1 + deliveries) / ln(1 + 20), at most 1: twenty deliveries saturate.
ACCESS_SATURATION = 20
UTILITY_WEIGHT_DEFAULT = 0.10  # the weight of utility when value_aware is asked for
SCORING_VERSIONS = ("v1",)
# minScore omitted: keep what scores at least this fraction of the best result.
ADAPTIVE_FRACTION = 0.3

# -- trust (read time only; never ranking) -------------------------------------------------

TRUST_WEIGHTS = {"confidence": 0.35, "evidence": 0.20, "freshness": 0.15, "utility": 0.10,
                 "sourceAuthority": 0.20}
EVIDENCE_SATURATION = 10  # evidence = ln(1 + n) / ln(1 + 10): one piece is 0.289
# Freshness = exp(-days since last use / stability); stability = 30 days x (1 + ln(1 + uses)).
STABILITY_BASE_DAYS = 30.0
SOURCE_AUTHORITY = {
    rules.SourceKind.ADMIN: 1.0, rules.SourceKind.USER: 1.0, rules.SourceKind.AGENT: 0.7,
    rules.SourceKind.EXTRACTION: 0.5, rules.SourceKind.FLUSH: 0.5,
    rules.SourceKind.TOOL_RESULT: 0.3,
}
RISK_SUPERSEDED = 1.0
RISK_CONTRADICTED = 0.5  # another visible live memory holds the same key with other content
RISK_STALE = 0.3  # unused and unchanged for STALE_AFTER, or expiring within EXPIRING_SOON
STALE_AFTER = rules.DECAY_AFTER
EXPIRING_SOON = timedelta(days=3)


def saturating(count: int, saturation: int) -> float:
    return min(1.0, math.log1p(max(0, count)) / math.log1p(saturation))
