"""Medley-solos-DB's entry in the benchmark catalogue (:mod:`lm_eval_rul.catalogue`):
``medley_solos`` (letters over its 8 instruments) and ``medley_solos_gen`` (free text read
into one instrument); :mod:`lm_eval_rul.tagging.releases`."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="medley_solos",
    name="Medley-solos-DB",
    metadata_keys="lm_eval_rul.tagging.data:TAGGING_METADATA_KEYS",
    checks=("lm_eval_rul.tagging.data:check_tagging_data",),
    report_names={
        "medley_solos": "Medley-solos-DB",
        "medley_solos_gen": "Medley-solos-DB (generation)",
    },
    report_section="tagging",
)
