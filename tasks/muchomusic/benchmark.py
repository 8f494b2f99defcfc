"""MuChoMusic's entry in the benchmark catalogue (:mod:`lm_eval_rul.catalogue`)."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="muchomusic",
    name="MuChoMusic",
    metadata_keys="lm_eval_rul.mcqa.tasks:METADATA_KEYS",
    data_keys={"muchomusic": "muchomusic_data_path"},
    checks=("lm_eval_rul.mcqa.tasks:check_task_metadata",),
    category_keys=("muchomusic_csv", "muchomusic_data_path", "data_path"),
    downloads=("muchomusic_data_path", "data_path"),  # left out: the public copy is downloaded
    report_names={
        "muchomusic": "MuChoMusic",
        "muchomusic_gen": "MuChoMusic (generation)",
        "muchomusic_textonly_gen": "MuChoMusic (text-only generation prompt)",
        "muchomusic_official": "MuChoMusic (official protocol)",
    },
    question_sets={
        "muchomusic_gen": "muchomusic",
        "muchomusic_textonly_gen": "muchomusic",
        "muchomusic_official": "muchomusic",
    },
)
