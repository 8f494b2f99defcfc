"""PI protocols, aggregation and summary (pure), and letter scoring with a tiny real model."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_rul.distractors import (
    PIPrompt,
    aggregate_pi,
    check_pi_questions,
    compute_pi,
    paper_prompts,
    release_prompts,
    summarize_pi,
)
from lm_eval_rul.mcqa import LetterScorer, letter_instances, perceptual_index
from lm_eval_rul.questions import Question, load_questions
from lm_eval_rul.registration import create_lm

Q4 = Question("448", "Which instrument?", "piano", ("violin", "flute", "drums", "harp"))
Q3 = Question("665", "What mood?", "calm", ("tense", "dark", "joyful"))


def test_paper_protocol_scores_four_options_per_prompt():
    prompts = paper_prompts(Q4, seed=1)
    assert len(prompts) == 16
    for p in prompts:  # the paper scores (A)-(D): leave-one-out sets of four options
        assert len(p.options) == 4 and p.options[p.gold] == "piano"
        assert Q4.distractors[p.left_out] not in p.options
        assert "(A) " in p.text and "(D) " in p.text and "(E)" not in p.text
        assert "A. " not in p.text and p.text.endswith("The most likely answer is")
    assert sorted(p.left_out for p in prompts) == sorted([0, 1, 2, 3] * 4)
    assert paper_prompts(Q4, seed=1) == prompts
    assert len({p.options for p in prompts}) > 8  # shuffled each time
    # a 3-distractor item (MuChoMusic) has one set of four, over seeded repeats
    three = paper_prompts(Q3, seed=1)
    assert {p.left_out for p in three} == {None} and {len(p.options) for p in three} == {4}
    assert len({p.options for p in three}) > 4


def test_release_protocol_leaves_each_distractor_out_four_times():
    prompts = release_prompts(Q4, seed=3)
    assert len(prompts) == 16
    for p in prompts:
        assert len(p.options) == 4 and p.options[p.gold] == "piano"
        assert Q4.distractors[p.left_out] not in p.options
        assert "A. " in p.text and "; B. " in p.text
    assert sorted(p.left_out for p in prompts) == sorted([0, 1, 2, 3] * 4)
    assert sorted(p.repeat for p in prompts) == sorted([0, 1, 2, 3] * 4)
    assert len({p.options for p in prompts}) > 8  # shuffled each time
    assert release_prompts(Q4, seed=3) == prompts
    assert release_prompts(Q4, seed=4) != prompts


def test_release_protocol_with_three_distractors_shuffles_all_four_options():
    prompts = release_prompts(Q3)
    assert len(prompts) == 16
    assert all(
        p.left_out is None and sorted(p.options) == sorted(["calm", *Q3.distractors])
        for p in prompts
    )


def test_pool_questions_are_rejected_with_a_clear_error():
    pool = Question("9", "Q?", "a", tuple("bcdefgh"))  # an item has at most 5 (MMAR: 6 options)
    with pytest.raises(ValueError, match=r"'9' \(7\).*lm-eval-rul build --pools"):
        check_pi_questions([Q4, pool], source="pools.json")
    with pytest.raises(ValueError, match="at most 5"):
        release_prompts(pool)


def test_aggregate_pi_is_one_minus_mean_p_correct():
    prompts = [PIPrompt("x", ("a", "b", "c", "d"), g) for g in (0, 2)]
    probs = [np.array([0.7, 0.1, 0.1, 0.1]), np.array([0.2, 0.2, 0.5, 0.1])]
    result = aggregate_pi("1", prompts, probs, protocol="release")
    assert result.pi == pytest.approx(1 - (0.7 + 0.5) / 2)
    assert result.p_correct == pytest.approx([0.7, 0.5])
    assert result.chance == pytest.approx(0.75) and result.n_prompts == 2
    with pytest.raises(ValueError, match="2 prompts but 1"):
        aggregate_pi("1", prompts, probs[:1], protocol="release")


def test_summary_counts_bins_and_share_above_chance():
    summary = summarize_pi([0.05, 0.15, 0.5, 0.76, 0.8, 1.0], [0.75] * 5 + [0.8])
    assert summary["histogram"] == [1, 1, 0, 0, 0, 1, 0, 1, 1, 1]
    assert summary["median"] == pytest.approx((0.5 + 0.76) / 2)
    assert summary["share_above_chance"] == pytest.approx(3 / 6)
    with pytest.raises(ValueError):
        summarize_pi([])


@pytest.fixture(scope="module")
def hf_lm(tiny_lm):
    return create_lm("hf", f"pretrained={tiny_lm},dtype=float32", device="cpu", batch_size=1)


def _count_forwards(lm):
    calls = []
    handle = lm.model.register_forward_hook(lambda mod, inp, out: calls.append(1))
    return calls, handle


def test_all_letters_of_a_prompt_come_from_one_forward_pass(hf_lm):
    questions = [Q4, Q3]
    calls, handle = _count_forwards(hf_lm)
    try:
        results = compute_pi(questions, hf_lm, protocol="release", progress=False)
    finally:
        handle.remove()
    distinct = {p.text for q in questions for p in release_prompts(q)}
    assert len(calls) == len(distinct)  # batch size 1: one forward per distinct prompt
    # The same numbers as scoring every letter in its own model call (no sharing).
    for q, result in zip(questions, results, strict=True):
        pairs = list(zip(release_prompts(q), result.p_correct, strict=True))[::5]
        for prompt, p_correct in pairs:
            instances = letter_instances([prompt.text], [len(prompt.options)])
            logliks = [hf_lm.loglikelihood([inst], disable_tqdm=True)[0][0] for inst in instances]
            assert 1 - p_correct == pytest.approx(perceptual_index(logliks, prompt.gold), abs=1e-6)


def test_split_letter_tokens_still_share_one_forward(tiny_lm_split_letters):
    lm = create_lm("hf", f"pretrained={tiny_lm_split_letters}", device="cpu", batch_size=1)
    calls, handle = _count_forwards(lm)
    try:
        (result,) = compute_pi([Q4], lm, protocol="paper", progress=False)
    finally:
        handle.remove()
    distinct = {p.text for p in paper_prompts(Q4)}
    assert len(calls) == len(distinct) and 0.0 <= result.pi <= 1.0


def test_pi_of_fixture_file_and_letter_scorer(hf_lm, data_dir):
    questions = load_questions(data_dir / "rul.json")
    results = compute_pi(questions, hf_lm, protocol="paper", chunk_size=3, progress=False)
    assert [r.id for r in results] == [q.id for q in questions]
    assert all(r.n_prompts == 16 and r.chance == pytest.approx(0.75) for r in results)
    assert [r.source_pi for r in results] == [q.pi for q in questions]
    scorer = LetterScorer(hf_lm, style="paper")
    (probs,) = scorer(questions[0].question, [results[0].prompts[0]["options"]])
    assert probs.sum() == pytest.approx(1.0)
    p_first = probs[results[0].prompts[0]["gold"]]
    assert p_first == pytest.approx(results[0].p_correct[0], abs=1e-6)
    assert scorer.n_calls == 1 and scorer.n_prompts == 1


def test_option_orders_come_from_the_harness_shuffle_with_documented_keys():
    from lm_eval_rul.mcqa import shuffled_options

    paper = [p for p in paper_prompts(Q4, seed=7) if p.repeat == 2 and p.left_out == 0]
    kept = list(Q4.distractors[1:])
    options, gold = shuffled_options(
        Q4.correct_answer, kept, seed=7, key=("pi-paper", Q4.id, 2, 0)
    )
    assert list(paper[0].options) == options and paper[0].gold == gold
    release = release_prompts(Q4, seed=7)
    kept = [d for j, d in enumerate(Q4.distractors) if j != 2]
    options, gold = shuffled_options(
        Q4.correct_answer, kept, seed=7, key=("pi-release", Q4.id, 1, 2)
    )
    (prompt,) = [p for p in release if p.repeat == 1 and p.left_out == 2]
    assert list(prompt.options) == options and prompt.gold == gold


def test_undefined_pi_is_a_user_input_error():
    from lm_eval_rul.errors import UserInputError

    with pytest.raises(UserInputError, match="'9' \\(0\\)"):
        check_pi_questions([Question("9", "Q?", "a", ())], source="q.jsonl")


def test_create_lm_without_device_uses_the_cpu_when_torch_sees_no_gpu(tiny_lm):
    import torch

    lm = create_lm("hf", f"pretrained={tiny_lm},dtype=float32")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert str(lm.device).startswith(expected)
    assert next(lm.model.parameters()).device.type == expected


def test_perceptual_index_metric_is_the_plugins_formula():
    from lm_eval_rul.mcqa.harness_metric import perceptual_index_metric

    class LLResults:  # lm-eval 0.5's shape: the choices' log-likelihoods in ``lls``
        lls = [0.0, 0.0, 0.0, 0.0]

    assert perceptual_index_metric(2, LLResults()) == 0.75
    assert perceptual_index_metric(0, [0.0, -1e9]) < 1e-12
