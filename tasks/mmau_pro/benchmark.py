"""MMAU-Pro's entry in the benchmark catalogue (:mod:`lm_eval_rul.catalogue`):
``mmau_pro_music`` (letters) and ``mmau_pro_music_gen`` (free text, read by
``mmau_pro_protocol``), its closed-form music items, each heard over all its clips."""

from lm_eval_rul.catalogue import Benchmark

BENCHMARK = Benchmark(
    folder="mmau_pro",
    name="MMAU-Pro-music",
    metadata_keys="lm_eval_rul.mcqa.mmau.pro:MMAU_PRO_METADATA_KEYS",
    data_keys={"mmau_pro_music": "mmau_pro_data"},
    checks=("lm_eval_rul.mcqa.mmau.pro:check_mmau_pro_data",),
    protocol_key="mmau_pro_protocol",
    protocols=("ours", "official"),
    report_names={
        "mmau_pro_music": "MMAU-Pro-music",
        "mmau_pro_music_gen": "MMAU-Pro-music (generation)",
    },
    question_sets={"mmau_pro_music_gen": "mmau_pro_music"},
)
