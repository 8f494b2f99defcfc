"""NSynth's entry in the benchmark catalogue (:mod:`lm_eval_rul.catalogue`):
``nsynth_instrument`` / ``nsynth_source`` (letters over the 11 instrument families / the 3
sources) and their ``_gen`` tasks (free text read into one label);
:mod:`lm_eval_rul.tagging.releases`."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="nsynth",
    name="NSynth",
    metadata_keys="lm_eval_rul.tagging.data:TAGGING_METADATA_KEYS",
    checks=("lm_eval_rul.tagging.data:check_tagging_data",),
    report_names={
        "nsynth_instrument": "NSynth instrument",
        "nsynth_instrument_gen": "NSynth instrument (generation)",
        "nsynth_source": "NSynth source",
        "nsynth_source_gen": "NSynth source (generation)",
    },
    report_section="tagging",
)
