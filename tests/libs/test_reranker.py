"""The local cross-encoder: its order on a fixed set, and the checksum check of its files."""

from __future__ import annotations

import shutil

import pytest

from libs import embeddings, reranker

QUERY = "Where does Kate work as a teaching assistant?"
ANSWER = "Kate: I'm a TA at UCLA, three afternoons a week."
NEAR = "Kate: work has been so busy this week, I barely slept."
FAR = "Elise: we went to a bar in Miami with friends last night."


async def test_the_answer_ranks_first_and_the_order_does_not_depend_on_the_batch():
    model = reranker.CrossEncoder()
    try:
        texts = [FAR, NEAR, ANSWER] + [f"Elise: photo {i} of the beach" for i in range(20)]
        given = await model.scores(QUERY, texts)
        assert max(range(len(texts)), key=given.__getitem__) == 2
        assert given[2] > given[1] > given[0]
        alone = await model.scores(QUERY, [NEAR, ANSWER])  # other neighbours, other threads
        assert alone == pytest.approx([given[1], given[2]], abs=1e-5)
        assert await model.scores(QUERY, []) == []
    finally:
        await model.close()


def test_a_model_file_that_is_not_the_pinned_one_is_refused(tmp_path):
    for name in ("tokenizer.json", "model.onnx"):
        shutil.copy(reranker.model_dir() / name, tmp_path / name)
    with open(tmp_path / "model.onnx", "ab") as file:
        file.write(b"\0")
    model = reranker.CrossEncoder(files=tmp_path)
    with pytest.raises(embeddings.ModelFileMismatch, match=r"model\.onnx has sha256 [0-9a-f]{64}"):
        model.load()


# The blend on a fixed pool: logits in the fused order, ranks from 1, k 10, weight 0.5.
# The model's ranks are 3, 1, 4, 2, so the blended scores are
#   0.5/13 + 0.5/11 = 0.083916, 0.5/11 + 0.5/12 = 0.087121,
#   0.5/14 + 0.5/13 = 0.074176, 0.5/12 + 0.5/14 = 0.077381.
LOGITS = [0.5, 2.0, -1.0, 1.0]


def test_the_blend_is_a_weighted_rrf_of_the_model_rank_and_the_given_rank():
    assert reranker.blended(LOGITS, 0.5, 10) == pytest.approx(
        [0.083916, 0.087121, 0.074176, 0.077381], abs=1e-6)
    assert reranker.blended(LOGITS, 0.8, 2) == pytest.approx(
        [0.8 / 5 + 0.2 / 3, 0.8 / 3 + 0.2 / 4, 0.8 / 6 + 0.2 / 5, 0.8 / 4 + 0.2 / 6])
    assert reranker.blended([], 0.5, 10) == []


class FixedScores:
    """A model whose logit of a text is given."""

    def __init__(self, logits: dict[str, float]) -> None:
        self.logits = logits
        self.asked: list[list[str]] = []

    async def scores(self, query: str, texts) -> list[float]:
        self.asked.append(list(texts))
        return [self.logits[t] for t in texts]


async def test_reorder_puts_the_pool_in_the_blend_order_and_keeps_the_rest_after_it():
    items = ["a", "b", "c", "d", "e", "f", "g"]
    model = FixedScores(dict(zip("abcd", LOGITS, strict=True)))
    ordered, given = await reranker.Reranking(model, 4, 0.5, 10).reorder(
        "q", items, lambda item: item)
    assert ordered == ["b", "a", "d", "c", "e", "f", "g"]  # the model alone: b, d, a, c
    assert given == LOGITS and model.asked == [["a", "b", "c", "d"]]  # only the pool is read
    alone, _ = await reranker.Reranking(model, 4, 1.0, 10).reorder("q", items, str)
    assert alone == ["b", "d", "a", "c", "e", "f", "g"]
    kept, _ = await reranker.Reranking(model, 4, 0.0, 10).reorder("q", items, str)
    assert kept == items
    short, _ = await reranker.Reranking(model, 20, 0.8, 10).reorder("q", items[:3], str)
    assert short == ["b", "a", "c"]


async def test_ties_of_the_blend_keep_the_given_order():
    model = FixedScores({"a": 0.0, "b": 1.0})  # ranks swapped at weight 0.5: a tie
    ordered, _ = await reranker.Reranking(model, 2, 0.5, 10).reorder("q", ["a", "b"], str)
    assert ordered == ["a", "b"]
