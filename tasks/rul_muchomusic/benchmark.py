"""RUL-MuChoMusic's entry in the benchmark catalogue (:mod:`lm_eval_rul.catalogue`)."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="rul_muchomusic",
    name="RUL-MuChoMusic",
    metadata_keys="lm_eval_rul.mcqa.tasks:METADATA_KEYS",
    data_keys={"rul_muchomusic": "rul_data_path"},
    checks=("lm_eval_rul.mcqa.tasks:check_task_metadata",),
    category_keys=("muchomusic_csv", "muchomusic_data_path", "data_path"),
    fold_groups=("rul_muchomusic", "rul_muchomusic_gen", "rul_muchomusic_textonly_gen"),
    downloads=("rul_data_path", "data_path"),  # left out: the public copy is downloaded
    report_names={
        "rul_muchomusic": "RUL-MuChoMusic",
        "rul_muchomusic_gen": "RUL-MuChoMusic (generation)",
        "rul_muchomusic_textonly_gen": "RUL-MuChoMusic (text-only generation prompt)",
        "rul_muchomusic_oneshot": "RUL-MuChoMusic, one-shot (5 options)",
        "rul_muchomusic_oneshot_gen": "RUL-MuChoMusic, one-shot generation (5 options)",
    },
    question_sets={
        "rul_muchomusic_gen": "rul_muchomusic",
        "rul_muchomusic_textonly_gen": "rul_muchomusic",
        "rul_muchomusic_oneshot": "rul_muchomusic",
        "rul_muchomusic_oneshot_gen": "rul_muchomusic",
    },
)
