"""MMAR's entry in the benchmark catalogue (:mod:`lm_eval_rul.catalogue`): ``mmar_music``,
``mmar_music_gen`` (the authors' items, MMAU's task code given MMAR's layout,
:mod:`lm_eval_rul.questions.mmar`) and ``rul_mmar_music`` (folds of a ``build`` file)."""

from lm_eval_rul.catalogue import Benchmark, PostRunFile, Reader

BENCHMARK = Benchmark(
    folder="mmar",
    name="MMAR-music",
    metadata_keys="lm_eval_rul.tasks.mmar.utils:MMAR_METADATA_KEYS",
    data_keys={"mmar_music": "mmar_data_path", "rul_mmar_music": "rul_mmar_data_path"},
    readers=(
        Reader(
            detect="lm_eval_rul.questions.mmar:is_mmar_file",
            read="lm_eval_rul.questions.mmar:read_mmar_questions",
            describe="lm_eval_rul.questions.mmar:describe_mmar_file",
        ),
    ),
    checks=("lm_eval_rul.tasks.mmar.utils:check_mmar_data",),
    fold_groups=("rul_mmar_music",),
    post_run_files=(
        PostRunFile(
            tasks=("mmar_music", "mmar_music_gen"),  # not rul_mmar_music: its options are ours
            write="lm_eval_rul.mcqa.mmau.predictions:write_predictions",
            what="MMAR predictions file",
        ),
    ),
    protocol_key="mmar_protocol",
    protocols=("rul", "official", "lmms"),
    downloads=("mmar_data_path",),  # left out: the public copy is downloaded
    report_names={
        "mmar_music": "MMAR-music",
        "mmar_music_gen": "MMAR-music (generation)",
        "rul_mmar_music": "RUL-MMAR-music",
    },
    question_sets={"mmar_music_gen": "mmar_music"},
)
