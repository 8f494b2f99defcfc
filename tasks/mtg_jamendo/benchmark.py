"""MTG-Jamendo's entry in the benchmark catalogue: tag likelihoods and free-text tags of the
genre, mood/theme, instrument and top-50 splits (split-0 test); :mod:`lm_eval_rul.tagging`."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="mtg_jamendo",
    name="MTG-Jamendo",
    metadata_keys="lm_eval_rul.tagging.data:TAGGING_METADATA_KEYS",
    checks=("lm_eval_rul.tagging.data:check_tagging_data",),
    report_names={
        "mtg_genre": "MTG-Jamendo genre",
        "mtg_genre_gen": "MTG-Jamendo genre (generation)",
        "mtg_moodtheme": "MTG-Jamendo mood/theme",
        "mtg_moodtheme_gen": "MTG-Jamendo mood/theme (generation)",
        "mtg_instrument": "MTG-Jamendo instrument",
        "mtg_instrument_gen": "MTG-Jamendo instrument (generation)",
        "mtg_top50": "MTG-Jamendo top-50",
        "mtg_top50_gen": "MTG-Jamendo top-50 (generation)",
    },
    report_section="tagging",
)
