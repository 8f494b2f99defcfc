"""MMAU's entry in the benchmark catalogue (:mod:`lm_eval_rul.catalogue`): ``mmau_music``,
``mmau_music_gen`` (the authors' items) and ``rul_mmau_music`` (folds of a ``build`` file)."""

from lm_eval_rul.catalogue import Benchmark, PostRunFile, Reader

BENCHMARK = Benchmark(
    folder="mmau",
    name="MMAU-music",
    metadata_keys="lm_eval_rul.mcqa.mmau.tasks:MMAU_METADATA_KEYS",
    data_keys={"mmau_music": "mmau_data_path", "rul_mmau_music": "rul_mmau_data_path"},
    readers=(
        Reader(
            detect="lm_eval_rul.questions.mmau:is_mmau_file",
            read="lm_eval_rul.questions.mmau:read_mmau_questions",
            describe="lm_eval_rul.questions.mmau:describe_mmau_file",
        ),
    ),
    checks=("lm_eval_rul.mcqa.mmau.tasks:check_mmau_data",),
    fold_groups=("rul_mmau_music",),
    post_run_files=(
        PostRunFile(
            tasks=("mmau_music", "mmau_music_gen"),  # not rul_mmau_music: its options are ours
            write="lm_eval_rul.mcqa.mmau.predictions:write_predictions",
            what="MMAU predictions file",
        ),
    ),
    protocol_key="mmau_protocol",
    protocols=("rul", "official", "lmms"),
    downloads=("mmau_data_path",),  # left out: the public copy is downloaded
    report_names={
        "mmau_music": "MMAU-music",
        "mmau_music_gen": "MMAU-music (generation)",
        "rul_mmau_music": "RUL-MMAU-music",
    },
    question_sets={"mmau_music_gen": "mmau_music"},
)
