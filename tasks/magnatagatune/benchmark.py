"""MagnaTagATune's entry in the benchmark catalogue: tag likelihoods and free-text tags of the
top-50 split's test clips; :mod:`lm_eval_rul.tagging`."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="magnatagatune",
    name="MagnaTagATune",
    metadata_keys="lm_eval_rul.tagging.data:TAGGING_METADATA_KEYS",
    checks=("lm_eval_rul.tagging.data:check_tagging_data",),
    report_names={
        "magnatagatune": "MagnaTagATune",
        "magnatagatune_gen": "MagnaTagATune (generation)",
    },
    report_section="tagging",
)
