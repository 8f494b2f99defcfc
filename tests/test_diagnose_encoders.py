"""T5 / CLAP text embeddings and their on-disk cache, with tiny random-weight models
built locally and loaded by path (the ``--t5 PATH`` / ``--clap PATH`` code path)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lm_eval_rul.diagnose.cache import EmbeddingCache, embed_texts
from lm_eval_rul.diagnose.encoders import (
    EncoderLoadError,
    checkpoint_identity,
    make_encoder,
    masked_mean,
)
from lm_eval_rul.testing.encoders import make_tiny_clap, make_tiny_t5

TEXTS = [
    "Male",
    "Electric guitar with heavy distortion and a long sustained feedback tail",
    "Tape saturation",
    "male",
    "Male",
]


@pytest.fixture(scope="module")
def encoder_dirs(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("encoders")
    return {"t5": str(make_tiny_t5(root / "t5")), "clap": str(make_tiny_clap(root / "clap"))}


def test_masked_mean_ignores_padding_positions():
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert masked_mean(hidden, mask).tolist() == [[2.0, 3.0]]
    assert masked_mean(hidden, torch.zeros(1, 3)).tolist() == [[0.0, 0.0]]


@pytest.mark.parametrize("space", ["t5", "clap"])
def test_a_text_is_identical_to_itself(space, encoder_dirs):
    encoder = make_encoder(space, encoder_dirs[space], device="cpu")
    emb = embed_texts(TEXTS, encoder, batch_size=2, progress=False)
    assert emb.stats.n_unique == 4 and emb.stats.n_encoded == 4
    for text in TEXTS:
        row = emb.rows([text])[0]
        assert float(row @ row) == pytest.approx(1.0, abs=1e-6)
    # Case matters to both tokenizers: "Male" and "male" are different texts.
    assert float(emb.rows(["Male"])[0] @ emb.rows(["male"])[0]) < 1 - 1e-6


@pytest.mark.parametrize("space", ["t5", "clap"])
def test_padding_does_not_change_an_embedding(space, encoder_dirs):
    encoder = make_encoder(space, encoder_dirs[space], device="cpu")
    alone = encoder.encode_batch(["Male"])[0]
    padded = encoder.encode_batch(["Male", TEXTS[1]])[0]  # "Male" padded to the long text
    np.testing.assert_allclose(alone, padded, rtol=1e-5, atol=1e-6)
    assert encoder.n_forward == 2


@pytest.mark.parametrize("space", ["t5", "clap"])
def test_rerun_reads_the_cache_and_never_loads_the_model(space, encoder_dirs, tmp_path):
    cache_path = tmp_path / "emb.sqlite"
    with EmbeddingCache(cache_path) as cache:
        cold = embed_texts(TEXTS, make_encoder(space, encoder_dirs[space]), cache=cache,
                           batch_size=3, progress=False)  # fmt: skip
    assert (cold.stats.n_cached, cold.stats.n_encoded, cold.stats.n_forward) == (0, 4, 2)
    warm_encoder = make_encoder(space, encoder_dirs[space])
    with EmbeddingCache(cache_path) as cache:
        assert cache.count(warm_encoder.key) == 4
        warm = embed_texts([*TEXTS, "Vinyl crackle"], warm_encoder, cache=cache,
                           progress=False)  # fmt: skip
        assert (warm.stats.n_cached, warm.stats.n_encoded, warm.stats.n_forward) == (4, 1, 1)
        again = embed_texts(TEXTS, make_encoder(space, encoder_dirs[space]), cache=cache,
                            progress=False)  # fmt: skip
    assert again.stats.n_forward == 0 and again.stats.n_cached == 4
    for text in TEXTS:
        np.testing.assert_array_equal(cold.rows([text]), again.rows([text]))


def test_the_two_spaces_do_not_share_cache_rows(encoder_dirs, tmp_path):
    with EmbeddingCache(tmp_path / "emb.sqlite") as cache:
        embed_texts(TEXTS, make_encoder("t5", encoder_dirs["t5"]), cache=cache, progress=False)
        clap = embed_texts(TEXTS, make_encoder("clap", encoder_dirs["clap"]), cache=cache,
                           progress=False)  # fmt: skip
    assert clap.stats.n_cached == 0 and clap.stats.n_encoded == 4


def test_resaved_weights_change_the_cache_key(tmp_path):
    folder = make_tiny_t5(tmp_path / "t5", seed=0)
    before = checkpoint_identity(str(folder))
    make_tiny_t5(folder, seed=1)
    assert checkpoint_identity(str(folder)) != before
    assert checkpoint_identity("google-t5/t5-base") == "google-t5/t5-base"
    assert make_encoder("t5", "google-t5/t5-base").key.startswith("t5|google-t5/t5-base|")


def test_long_texts_are_truncated_and_counted(encoder_dirs):
    encoder = make_encoder("t5", encoder_dirs["t5"], max_length=4)
    encoder.encode_batch(["Male", TEXTS[1]])
    assert encoder.n_truncated == 1


def test_bad_checkpoints_name_the_flag_and_the_fix(encoder_dirs, tmp_path):
    with pytest.raises(EncoderLoadError, match=r"--t5 .*no such folder"):
        make_encoder("t5", str(tmp_path / "missing"))
    not_a_model = tmp_path / "empty"
    not_a_model.mkdir()
    with pytest.raises(EncoderLoadError, match="--no_similarity"):
        make_encoder("clap", str(not_a_model)).encode_batch(["Male"])
    with pytest.raises(ValueError, match="space must be one of"):
        make_encoder("bert", encoder_dirs["t5"])
