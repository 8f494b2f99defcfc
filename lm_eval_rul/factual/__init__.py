"""Factual music comprehension: is what an audio LM says it hears right?

Six tasks (instrument and composer on MusicNet, genre on FMA, regional style, mood
and time signature on OverClocked ReMix), each asked with an open prompt and a list
prompt; answers are parsed into canonical labels and scored with set precision,
recall and F1, with the real recording and with an unrelated one. The model-free core
(data, prompts, parsing, chunking, metrics and baselines) and the harness task functions
(``tasks/factual/utils.py`` re-exports :mod:`.tasks`). Method and decisions:
``docs/factual.md``.

The folder is the pipeline: :mod:`.datasets` (the public datasets read into items),
the items and the documents a model hears, :mod:`.reading` (its answers read into labels,
true/false or a choice), then records, metrics and baselines. Modules and their public
names:

* :mod:`.reading.labels`: ``TASKS``, ``TaskInfo``, ``task_info``, ``MUSICNET_PROGRAMS``,
  ``MUSICNET_COMPOSERS``, ``OCREMIX_MOODS``, ``OCREMIX_REGIONAL``, ``OCREMIX_TIMESIGS``,
  ``timesig_label``, ``display_name``, ``out_of_vocabulary``
* :mod:`.reading.aliases`: the alias tables (``INSTRUMENT_ALIASES``, ``COMPOSER_ALIASES``, ...)
* :mod:`.reading.names`: open name lists, agent nouns, mood and regional synonyms
  (``OPEN_INSTRUMENTS``, ``OPEN_COMPOSERS``, ``OPEN_GENRES``, ``AGENT_NOUNS``,
  ``MOOD_SYNONYMS``, ``REGIONAL_SYNONYMS``, ``SHORT_MISSPELLINGS``)
* :mod:`.reading.senses`: ``SENSES``, ``FAMILY_LABELS``, ``CAPITALIZED``, ``TIMESIG_PHRASES``,
  ``sense_pattern``, ``timesig_phrases``, ``timesig_label_of``, ``timesig_phrase_pattern``,
  ``timesig_phrase_label`` (other word senses, families of instruments, time-signature
  phrases)
* :mod:`.reading.fuzzy`: ``FuzzyIndex``, ``osa_distance``, ``max_distance``, ``MIN_LENGTH``,
  ``SHORT_LENGTH``, ``GUARD_WORDS``, ``SHORT_WORDS`` (bounded matching of misspellings);
  :mod:`.reading.guards`: ``GUARD_WORDS``, ``SHORT_WORDS`` (real words never read as a name)
* :mod:`.reading.scopes`: ``drop_reasons``, ``DROP_REASONS``, ``RAISED_IN_QUESTION``
  (negation, rejection, hedge and comparison scopes)
* :mod:`.reading.answers`: ``read_truefalse``, ``read_choice``, ``Reading`` (true/false and
  binary-choice answers, with why)
* :mod:`.reading.genres`: ``GenreTree``, ``read_genre_tree``, ``GenreTableError``
* :mod:`.reading.lexicon`: ``Lexicon``, ``lexicon_for``, ``normalize_text``
* :mod:`.reading.parser`: ``PARSER_VERSION``, ``parse_labels``, ``ParseResult``, ``Mention``,
  ``explain``
* :mod:`.prompts`: ``TEMPLATES``, ``PROMPT_VARIANTS``, ``prompt``, ``candidate_labels``,
  ``parser_prompt``, ``read_parser_reply``
* :mod:`.items`: ``Item``, ``TaskItems``, ``sample_items``, ``assign_random_clips``,
  ``RandomClips``
* :mod:`.datasets.musicnet`, :mod:`.datasets.fma`, :mod:`.datasets.ocremix`:
  ``read_musicnet``, ``read_fma``, ``read_ocremix`` (and their table readers)
* :mod:`.datasets.audio_files`: ``check_audio_files``, ``CheckedItems``
* :mod:`.errors`: ``FactualInputError``, ``AudioFilesError``
* :mod:`.datasets.sources`: ``prepare_task``, ``PreparedTask``, ``read_task_items``
* :mod:`.protocol`: ``PROTOCOLS``, ``DEFAULT_PROTOCOL``, ``check_protocol`` (``rul``, ours,
  or ``paper``: what a model hears of a long recording, an API model's settings)
* :mod:`.chunks`: ``plan_windows``, ``HeardPlan`` (what a model hears of a recording),
  ``chunk_windows``, ``aggregate_labels``, ``effective_chunk_seconds``
* :mod:`.metrics`: ``precision_recall_f1``, ``item_scores``, ``micro_scores``,
  ``per_label_scores``, ``macro_f1``, ``set_metrics``, ``tree_metrics`` (same-tree genre,
  each label judged on its own), ``genre_metrics``, ``SetMetrics``
* :mod:`.baselines`: ``majority_baseline``, ``frequency_baseline``,
  ``expected_item_scores``, ``label_frequencies``
* :mod:`.documents`: ``make_documents``, ``run_options``, ``RunOptions`` (one harness
  document per window of a recording)
* :mod:`.records`: ``item_predictions``, ``item_figures``, ``set_figures``,
  ``figure_names``, ``ItemPrediction`` (chunk records -> item predictions -> figures)
* :mod:`.tasks`: ``load_factual``, ``process_results``, ``AGGREGATIONS_BY_METRIC``,
  ``add_item_predictions``, ``check_tasks_audio`` (the harness glue)
* the robustness studies: :mod:`.reading.binary` (``binary_pairs``, ``read_binary_answer``,
  ``binary_items``, ``binary_figures``: acc and the paper's F1), :mod:`.reading.truefalse`
  (``read_truefalse_answer``, ``aggregate_answers``, ``label_answers``,
  ``truefalse_figures``), :mod:`.studies` (their documents), :mod:`.study_tasks` (their
  harness functions)
* the LLM parser: :mod:`.reading.llm_parser` (``LLMParser``, ``ParserQuery``, ``reply_problem``),
  :mod:`.reading.reparse` (``reparse_runs``: re-score finished runs into a copy)

Nothing is read at import time.
"""

from __future__ import annotations

from .baselines import frequency_baseline, majority_baseline
from .chunks import aggregate_labels, chunk_windows, effective_chunk_seconds
from .datasets.sources import PreparedTask, prepare_task
from .errors import AudioFilesError, FactualInputError
from .items import Item, RandomClips, TaskItems, assign_random_clips, sample_items
from .metrics import SetMetrics, genre_metrics, precision_recall_f1, set_metrics
from .prompts import PROMPT_VARIANTS, TEMPLATES, parser_prompt, prompt, read_parser_reply
from .reading.genres import GenreTree, read_genre_tree
from .reading.labels import TASKS, task_info
from .reading.lexicon import lexicon_for
from .reading.parser import PARSER_VERSION, ParseResult, parse_labels

__all__ = [
    "TASKS",
    "task_info",
    "GenreTree",
    "read_genre_tree",
    "lexicon_for",
    "PARSER_VERSION",
    "ParseResult",
    "parse_labels",
    "PROMPT_VARIANTS",
    "TEMPLATES",
    "prompt",
    "parser_prompt",
    "read_parser_reply",
    "Item",
    "TaskItems",
    "RandomClips",
    "sample_items",
    "assign_random_clips",
    "FactualInputError",
    "AudioFilesError",
    "PreparedTask",
    "prepare_task",
    "chunk_windows",
    "aggregate_labels",
    "effective_chunk_seconds",
    "SetMetrics",
    "precision_recall_f1",
    "set_metrics",
    "genre_metrics",
    "majority_baseline",
    "frequency_baseline",
]
