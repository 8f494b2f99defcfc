"""GTZAN's entry in the benchmark catalogue (:mod:`lm_eval_rul.catalogue`):
``gtzan`` (letters over the ten genres) and ``gtzan_gen`` (free text read into one genre);
:mod:`lm_eval_rul.tagging`."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="gtzan",
    name="GTZAN",
    metadata_keys="lm_eval_rul.tagging.data:TAGGING_METADATA_KEYS",
    checks=("lm_eval_rul.tagging.data:check_tagging_data",),
    report_names={
        "gtzan": "GTZAN",
        "gtzan_gen": "GTZAN (generation)",
    },
    report_section="tagging",
)
