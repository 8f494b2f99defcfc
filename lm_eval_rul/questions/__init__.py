"""What a benchmark is: question records, readers and validation, pools, seeding.

The lowest stage of the package: it imports nothing else of ``lm_eval_rul`` but
:mod:`lm_eval_rul.errors` and :mod:`lm_eval_rul.files`. Every other stage reads questions
through it.

Public names:

* :class:`Question`, :class:`PoolCleaningReport`, :func:`normalize_answer`,
  :class:`DataValidationError`, :class:`DataSourceError` (:mod:`.schema`);
* :func:`load_questions`, :func:`read_rul_json`, :func:`read_pools`,
  :func:`read_muchomusic_csv`, :func:`read_questions_table`, :func:`attach_tracks`,
  :func:`load_questions_without_distractors`, :func:`read_as_released`,
  :data:`MUCHOMUSIC_COLUMNS` (:mod:`.readers`);
* :func:`read_muchomusic_categories`, :class:`QuestionCategories`,
  :data:`CATEGORY_DIMENSIONS` (:mod:`.categories`: MuChoMusic's question categories);
* :func:`clean_candidate`, :func:`clean_pool`, :func:`clean_pools`, :class:`CleanedPool`
  (:mod:`.pools`);
* :func:`default_rul_path`, :func:`default_muchomusic_csv`, :func:`cache_dir`,
  :data:`RUL_GITHUB_URL`, :data:`RUL_HF_REPO`, :data:`MUCHOMUSIC_HF_REPO`,
  :data:`MUCHOMUSIC_CSV_NAME` (:mod:`.sources`: the public copies and their cache);
* :data:`DEFAULT_SEED`, :func:`derive_seed`, :func:`item_rng`, :func:`sample_order`,
  :func:`limited_sample` (:mod:`.seeding`);
* MMAU's released JSON: :mod:`.mmau` (``read_mmau_json``, ``MMAUItem``; its music items
  are read by :func:`load_questions` too).
"""

from .categories import CATEGORY_DIMENSIONS, QuestionCategories, read_muchomusic_categories
from .loading import load_questions, load_questions_without_distractors
from .pools import CleanedPool, clean_candidate, clean_pool, clean_pools
from .readers import (
    MUCHOMUSIC_COLUMNS,
    attach_tracks,
    read_as_released,
    read_muchomusic_csv,
    read_pools,
    read_questions_table,
    read_rul_json,
)
from .schema import (
    DataSourceError,
    DataValidationError,
    PoolCleaningReport,
    Question,
    normalize_answer,
)
from .seeding import DEFAULT_SEED, derive_seed, item_rng, limited_sample, sample_order
from .sources import (
    MUCHOMUSIC_CSV_NAME,
    MUCHOMUSIC_HF_REPO,
    RUL_GITHUB_URL,
    RUL_HF_REPO,
    cache_dir,
    default_muchomusic_csv,
    default_rul_path,
)

__all__ = [
    "Question",
    "PoolCleaningReport",
    "DataValidationError",
    "DataSourceError",
    "normalize_answer",
    "MUCHOMUSIC_COLUMNS",
    "load_questions",
    "read_rul_json",
    "read_pools",
    "read_muchomusic_csv",
    "read_questions_table",
    "attach_tracks",
    "load_questions_without_distractors",
    "read_as_released",
    "CATEGORY_DIMENSIONS",
    "QuestionCategories",
    "read_muchomusic_categories",
    "CleanedPool",
    "clean_candidate",
    "clean_pool",
    "clean_pools",
    "DEFAULT_SEED",
    "derive_seed",
    "item_rng",
    "limited_sample",
    "sample_order",
    "RUL_GITHUB_URL",
    "RUL_HF_REPO",
    "MUCHOMUSIC_HF_REPO",
    "MUCHOMUSIC_CSV_NAME",
    "cache_dir",
    "default_rul_path",
    "default_muchomusic_csv",
]
