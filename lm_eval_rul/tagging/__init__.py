"""Music tagging with the listening test: GTZAN, MTG-Jamendo and MagnaTagATune.

The tasks (``tasks/gtzan``, ``tasks/mtg_jamendo``, ``tasks/magnatagatune``, groups in
``tasks/music_tagging``) read the releases' metadata as they ship it (:mod:`.readers`,
:mod:`.sources`, :mod:`.data`), make one harness document per clip (:mod:`.documents`) and
score it in one of three forms (:mod:`.tasks`): letters (``gtzan``), tag likelihoods (a
yes/no question per tag, all tags after one audio prefix per clip; :mod:`.records`) and
free text read into tags (:mod:`.parsing`, :mod:`.vocab`). The metrics are pure functions
(:mod:`.metrics`: macro ROC-AUC / PR-AUC, micro P/R/F1, samples F1, the popularity
baseline). DESIGN §3c; docs/tasks.md, "Music tagging".

Public names: :data:`GTZAN_GENRES`, :data:`MTT_TOP50`, :func:`tag_text`,
:func:`tag_lexicon`, :class:`Clip`, :class:`TaggingDataError`, :func:`read_gtzan_split`,
:func:`read_mtg_tsv`, :func:`read_mtt`, :func:`read_tags`, :func:`read_genre`,
:func:`macro_auc`, :func:`set_scores`, :func:`popularity_tags`,
:func:`popularity_baseline`, :func:`likelihood_figures`, :func:`gen_figures`,
:data:`TAGGING_METADATA_KEYS`.
"""

from .data import TAGGING_METADATA_KEYS
from .metrics import macro_auc, popularity_baseline, popularity_tags, set_scores
from .parsing import read_genre, read_tags
from .readers import Clip, TaggingDataError, read_gtzan_split, read_mtg_tsv, read_mtt
from .records import gen_figures, likelihood_figures
from .vocab import GTZAN_GENRES, MTT_TOP50, tag_lexicon, tag_text

__all__ = [
    "GTZAN_GENRES",
    "MTT_TOP50",
    "tag_text",
    "tag_lexicon",
    "Clip",
    "TaggingDataError",
    "read_gtzan_split",
    "read_mtg_tsv",
    "read_mtt",
    "read_tags",
    "read_genre",
    "macro_auc",
    "set_scores",
    "popularity_tags",
    "popularity_baseline",
    "likelihood_figures",
    "gen_figures",
    "TAGGING_METADATA_KEYS",
]
