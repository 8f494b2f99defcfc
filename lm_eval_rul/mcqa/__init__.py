"""Multiple-choice music QA: prompts, option letters, folds, letter scoring, PI maths,
answer parsing, voting, and the harness task functions of MuChoMusic and RUL-MuChoMusic.

Imports :mod:`lm_eval_rul.questions` (what a question is) and :mod:`lm_eval_rul.audio`
(the task functions attach each document's clip); never the build or report stages.

Public names:

* :data:`LETTERS`, :func:`letters_for`, :func:`pi_prompt`, :func:`gen_prompt`,
  :func:`muchomusic_official_prompt`, :func:`format_options_paper`,
  :func:`format_options_release` (:mod:`.prompts`: every prompt template);
* :data:`N_FOLDS`, :func:`shuffled_options`, :func:`make_doc`, :func:`make_docs`
  (:mod:`.folds`: harness documents with seeded option orders);
* :func:`choice_probabilities`, :func:`perceptual_index`, :func:`is_correct`,
  :func:`mean_perceptual_index` (:mod:`.scoring`);
* :func:`letter_instances`, :func:`letter_logliks`, :class:`LetterScorer`,
  :class:`PromptTooLongError`, :func:`overlong_prompts`, :data:`LONG_PROMPT_CHOICES`
  (:mod:`.letter_scoring`: letters of many prompts in one harness call, never cut);
* :func:`letter_token_ids`, :func:`multi_token_letter_warnings`,
  :func:`warn_for_model_args` (:mod:`.letters`);
* :func:`parse_answer`, :class:`ParsedAnswer`, :data:`PARSE_RULES` (:mod:`.parsing`);
* :func:`parse_answer_release`, :func:`muchomusic_official_answer`, :data:`PARSERS`,
  :func:`parse_with` (:mod:`.reference_parsing`: the reference codebases' extraction);
* :func:`majority_vote`, :func:`majority_vote_accuracy`, :func:`majority_from_answers`,
  :func:`plurality_vote_release`, :func:`plurality_answer_release`,
  :func:`plurality_from_answers` (:mod:`.voting`);
* the task functions in :mod:`.tasks` (``load_rul_muchomusic``, ``doc_to_text`` ...)
  and :mod:`.native_tasks` (the ``_native_gen`` tasks' ``doc_to_audio``,
  ``load_rul_muchomusic_native``, ``load_muchomusic_native``, ``NATIVE_SAMPLING_RATE``),
  imported by the task folders' ``utils.py`` (not re-exported here: they load audio
  helpers);
* :mod:`.mmau` (the MMAU tasks: protocols, prompts, the authors' predictions file) and
  :mod:`.mmau_parsing` (MMAU's official string-match rule, lmms-eval's letter reading).
"""

from .folds import N_FOLDS, make_doc, make_docs, shuffled_options
from .letter_scoring import (
    LONG_PROMPT_CHOICES,
    LetterScorer,
    PromptTooLongError,
    letter_instances,
    letter_logliks,
    overlong_prompts,
)
from .letters import letter_token_ids, multi_token_letter_warnings, warn_for_model_args
from .parsing import PARSE_RULES, ParsedAnswer, parse_answer
from .prompts import (
    LETTERS,
    format_options_paper,
    format_options_release,
    gen_prompt,
    letters_for,
    muchomusic_official_prompt,
    pi_prompt,
)
from .reference_parsing import PARSERS, muchomusic_official_answer, parse_answer_release, parse_with
from .scoring import choice_probabilities, is_correct, mean_perceptual_index, perceptual_index
from .voting import (
    majority_from_answers,
    majority_vote,
    majority_vote_accuracy,
    plurality_answer_release,
    plurality_from_answers,
    plurality_vote_release,
)

__all__ = [
    "LETTERS",
    "letters_for",
    "pi_prompt",
    "gen_prompt",
    "muchomusic_official_prompt",
    "format_options_paper",
    "format_options_release",
    "N_FOLDS",
    "shuffled_options",
    "make_doc",
    "make_docs",
    "choice_probabilities",
    "perceptual_index",
    "is_correct",
    "mean_perceptual_index",
    "letter_instances",
    "letter_logliks",
    "LetterScorer",
    "PromptTooLongError",
    "overlong_prompts",
    "LONG_PROMPT_CHOICES",
    "letter_token_ids",
    "multi_token_letter_warnings",
    "warn_for_model_args",
    "PARSE_RULES",
    "ParsedAnswer",
    "parse_answer",
    "PARSERS",
    "parse_answer_release",
    "muchomusic_official_answer",
    "parse_with",
    "majority_vote",
    "majority_vote_accuracy",
    "majority_from_answers",
    "plurality_answer_release",
    "plurality_vote_release",
    "plurality_from_answers",
]
