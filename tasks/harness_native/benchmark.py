"""The harness-audio twins of the MuChoMusic tasks in the benchmark catalogue
(:mod:`lm_eval_rul.catalogue`): same questions and keys, audio declared the harness's way."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="harness_native",
    name="MuChoMusic / RUL-MuChoMusic (harness audio)",
    metadata_keys="lm_eval_rul.mcqa.tasks:METADATA_KEYS",
    checks=("lm_eval_rul.mcqa.tasks:check_task_metadata",),
    fold_groups=("rul_muchomusic_native_gen",),
    category_keys=("muchomusic_csv", "muchomusic_data_path", "data_path"),
    question_sets={
        "muchomusic_native_gen": "muchomusic",
        "rul_muchomusic_native_gen": "rul_muchomusic",
    },
)
