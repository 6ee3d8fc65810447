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
