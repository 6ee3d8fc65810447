"""BM25 sparse vectors without Qdrant's engine, held against the engine (qdrant-edge)."""

from __future__ import annotations

import pytest
import qdrant_edge

from libs.bm25 import Bm25, Bm25Config

TEXTS = [
    "The user prefers dark mode and answers in French.",
    "Deploying the service: the deployment deploys on Fridays, deployed twice already!",
    "API keys are created by `python -m services.gateway.admin create-key --account demo`.",
    "journal_message_search, user_id=u-42; e-mail: ada@example.org (O'Neil's TODO #7)",
    "Running runs ran quickly; the runner's running shoes. RUNNING Runs.",
    "Größe, Straße, café, naïve, Ærøskøbing, İstanbul, ΣΊΣΥΦΟΣ, ὀδυσσεύς, Ǆemal, ﬁne",
    "हिन्दी भाषा में लिखा गया पाठ, ٣٤٥ and x² ½ Ⅻ ①②",
    "日本語のテキストと中文 mixed with English words 🙂👍🏽",
    "don't you're it's shouldn't won't: stop words with apostrophes split apart",
    "tab\tseparated\nlines — em–dash   spaces   and_underscores.dots/slashes\\back",
    "repeat repeat repeat repeat repeat once",
    "",
    "   ...   ",
    " ".join(["long"] * 300 + ["document", "beyond", "the", "average", "length"]),
]


def _engine(stemming: bool):
    config = {} if stemming else {"stemmer": qdrant_edge.DisabledStemmer()}
    return qdrant_edge.Bm25(qdrant_edge.Bm25Config(k=1.2, b=0.75, avg_len=256.0,
                                                   language="english", **config))


@pytest.mark.parametrize("text", TEXTS)
def test_every_number_matches_qdrants_engine_without_stemming(text):
    ours, engine = Bm25(Bm25Config(stemming=False)), _engine(stemming=False)
    document, expected = ours.embed_document(text), engine.embed_document(text)
    assert document.indices == list(expected.indices)
    assert document.values == list(expected.values)
    assert ours.embed_query(text).indices == list(engine.embed_query(text).indices)
    assert set(ours.embed_query(text).values) <= {1.0}


def test_stems_match_qdrants_engine_but_where_snowball_has_changed_since():
    ours, engine = Bm25(), _engine(stemming=True)
    words = {word for text in TEXTS for word in text.split()} | {
        "deploying", "deploys", "deployed", "generously", "organisation", "communication"}
    differing = {word for word in words
                 if ours.embed_query(word).indices != list(engine.embed_query(word).indices)}
    assert differing == set()
    # Known: qdrant-edge carries an older Snowball English.
    for word, ours_stem in (("added", "add"), ("internal", "internal"), ("universal", "universal")):
        assert ours.tokens(word) == [ours_stem]
        assert ours.embed_query(word).indices != list(engine.embed_query(word).indices)


def test_a_document_weighs_term_frequency_and_length_like_bm25():
    ours = Bm25(Bm25Config(avg_len=5.0))
    the_cat = ours.embed_document("cat sat cat mat dog")  # "cat" twice in 5 tokens
    weights = dict(zip(the_cat.indices, the_cat.values, strict=True))
    (cat,) = ours.embed_query("cat").indices
    assert weights[cat] == pytest.approx(2 * 2.2 / (1.2 * (0.25 + 0.75 * 5 / 5) + 2))
    assert ours.embed_query("cat cat cats").indices == [cat]
