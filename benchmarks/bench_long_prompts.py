"""A huge question before its ``PromptTooLongError``: tokenised once, not 128 times.

``pi`` measures a question's 16 prompts against the model's context before scoring. The
old check encoded every prompt with each of its 4 letters as the harness does
(``_encode_pair``: 2 encodes), 128 encodes of the whole text; the new one tokenises a
prompt once (the letters one by one only near the limit) and stops at a question's
first prompt that is too long. Both run here on the same question (a tiny real Qwen2
tokenizer, ``max_length=80``), with the text size in MB as the argument.

Usage::

    python benchmarks/bench_long_prompts.py [--megabytes 0.1]  # the old check: minutes at 1 MB

Exit status 1 if the new check is not at least 20 times faster, or the verdicts differ.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time


def old_lengths(lm, questions, limit: int) -> dict[str, int]:
    """The old check: every prompt, every letter, through ``_encode_pair``."""
    from lm_eval_rul.distractors.pi import protocol_prompts
    from lm_eval_rul.mcqa.letter_scoring import fits_surely, letters_for, request_tokens

    lengths: dict[str, int] = {}
    for q in questions:
        for prompt in protocol_prompts(q, protocol="release", seed=1234):
            letters = letters_for(len(prompt.options))
            if fits_surely(prompt.text + " " + letters[-1], limit):
                continue
            tokens = max(request_tokens(lm, prompt.text, f" {x}") for x in letters)
            if tokens > limit + 1:
                lengths[q.id] = max(tokens, lengths.get(q.id, 0))
    return lengths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=0.1)
    args = parser.parse_args()

    from lm_eval_rul.distractors import long_prompt_questions
    from lm_eval_rul.questions import Question
    from lm_eval_rul.registration import create_lm
    from lm_eval_rul.testing.text import make_tiny_causal_lm

    sentence = "Which instrument plays the opening bars of this very long piece? "
    huge = sentence * int(args.megabytes * 1e6 / len(sentence))
    questions = [
        Question(id="huge", question=huge, correct_answer="violin",
                 distractors=["cello", "flute", "oboe"]),
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        model = make_tiny_causal_lm(folder, family="qwen2")
        lm = create_lm("hf", f"pretrained={model},max_length=80", device="cpu")
        start = time.perf_counter()
        new, limit = long_prompt_questions(lm, questions)
        new_seconds = time.perf_counter() - start
        start = time.perf_counter()
        old = old_lengths(lm, questions, int(limit))
        old_seconds = time.perf_counter() - start
    print(f"question of {len(huge) / 1e6:.2f} MB, context {limit} tokens")
    print(f"  old check (every prompt x letter)  {old_seconds:8.2f} s  -> {old}")
    print(f"  new check (once)                   {new_seconds:8.2f} s  -> {new}")
    print(f"old / new = {old_seconds / new_seconds:.1f}x")
    return 0 if set(new) == set(old) and old_seconds >= 20 * new_seconds else 1


if __name__ == "__main__":
    sys.exit(main())
