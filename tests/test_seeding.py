from lm_eval_rul.questions import derive_seed, item_rng


def test_derive_seed_is_stable_and_key_sensitive():
    assert derive_seed("options", 1234, "448", 0) == derive_seed("options", 1234, "448", 0)
    assert derive_seed("options", 1234, "448", 0) != derive_seed("options", 1234, "448", 1)
    assert derive_seed("options", 1234, "448", 0) != derive_seed("options", 1235, "448", 0)
    # int 1 and str "1" are different keys: ids are always strings in docs
    assert derive_seed(1) != derive_seed("1")
    assert 0 <= derive_seed("x") < 2**63


def test_item_rng_reproduces_draws():
    assert item_rng("a", 1).permutation(10).tolist() == item_rng("a", 1).permutation(10).tolist()
    assert item_rng("a", 1).permutation(10).tolist() != item_rng("a", 2).permutation(10).tolist()
