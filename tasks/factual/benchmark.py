"""The factual music-comprehension tasks in the benchmark catalogue
(:mod:`lm_eval_rul.catalogue`); ``report`` gives them their own section."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="factual",
    name="Factual music comprehension",
    metadata_keys="lm_eval_rul.factual.tasks:FACTUAL_METADATA_KEYS",
    protocol_key="factual_protocol",
    protocols=("rul", "paper"),
    report_section="factual",
)
