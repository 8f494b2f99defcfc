"""The tagging groups in the benchmark catalogue: ``music_tagging`` (every tagging task) and
``music_understanding`` (the model reports' music table: RUL-MuChoMusic and the free-text
tagging tasks)."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="music_tagging",
    name="Music tagging",
    metadata_keys="lm_eval_rul.tagging.data:TAGGING_METADATA_KEYS",
    report_section="tagging",
)
