"""``music_mc``'s entry in the benchmark catalogue (:mod:`lm_eval_rul.catalogue`): a
user's own multiple-choice file, which ``report`` names by its ``benchmark_name``."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="music_mc",
    name="Your multiple-choice benchmark",
    metadata_keys="lm_eval_rul.mcqa.music_mc:MUSIC_MC_METADATA_KEYS",
    data_keys={"music_mc": "mc_data_path", "rul_music_mc": "mc_data_path"},
    checks=("lm_eval_rul.mcqa.music_mc:check_music_mc_data",),
    fold_groups=("rul_music_mc",),
    report_names={
        "music_mc": "music_mc",
        "music_mc_gen": "music_mc (generation)",
        "rul_music_mc": "RUL-music_mc",
    },
    question_sets={"music_mc_gen": "music_mc"},
)
