"""The ``music_understanding`` group offline with every member's data (the listening test and
the five tagging benchmarks): each member reads its own keys, long tagging clips are
trimmed and counted, and the report's first line counts the tagging tasks."""

from __future__ import annotations

import json

import pytest

from lm_eval_rul.testing.harness import read_output
from lm_eval_rul.testing.mmau_pro import write_mmau_pro_audio, write_mmau_pro_parquet
from lm_eval_rul.testing.tagging import (
    write_gtzan,
    write_medley,
    write_mtg,
    write_mtt,
    write_nsynth,
)


@pytest.fixture(scope="module")
def tagging_data(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tagging5")
    gtzan, mtg = write_gtzan(root / "gtzan", per_genre=1), write_mtg(root / "mtg")
    mtt, medley = write_mtt(root / "mtt"), write_medley(root / "medley")
    return {
        "nsynth_dir": str(write_nsynth(root / "nsynth")),
        "medley_metadata": str(medley["metadata"]), "medley_audio_dir": str(medley["audio"]),
        "gtzan_split_file": str(gtzan["split"]), "gtzan_audio_dir": str(gtzan["audio"]),
        "mtg_data_dir": str(mtg["data"]), "mtg_audio_dir": str(mtg["audio"]),
        "mtt_annotations": str(mtt["annotations"]), "mtt_split_file": str(mtt["split"]),
        "mtt_audio_dir": str(mtt["audio"]), "tagging_seconds": 1.5,
    }  # fmt: skip


def test_music_understanding_runs_offline_with_each_members_keys(
    tiny_lm, data_dir, tagging_data, tmp_path
):
    from lm_eval_rul.cli import main

    out = tmp_path / "out"
    mmau_pro = {
        "mmau_pro_data": str(write_mmau_pro_parquet(tmp_path / "test.parquet")),
        "mmau_pro_audio_dir": str(write_mmau_pro_audio(tmp_path / "release")),
    }
    metadata = {**tagging_data, **mmau_pro, "data_path": str(data_dir / "rul.json")}
    main(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
          "--tasks", "music_understanding", "--metadata", json.dumps(metadata),
          "--device", "cpu", "--batch_size", "8", "--limit", "1",
          "--output_path", str(out)])  # fmt: skip
    results, _ = read_output(out)
    ran = set(results["results"])
    assert {"rul_muchomusic_fold0", "gtzan_gen", "mtg_top50_gen", "magnatagatune_gen",
            "nsynth_instrument_gen", "medley_solos_gen", "mmau_pro_music_gen"} <= ran


def test_a_tagging_clip_longer_than_the_model_hears_is_trimmed_and_counted(
    tiny_audio_lm, tagging_data, tmp_path
):
    from lm_eval_rul.testing.harness import run_cli

    out = tmp_path / "out"
    done = run_cli(["run", "--model", "lalm", "--model_args",
                    f"pretrained={tiny_audio_lm},max_audio_seconds=1,results_cache=none",
                    "--tasks", "gtzan", "--limit", "3", "--batch_size", "16",
                    "--metadata", json.dumps(tagging_data), "--device", "cpu",
                    "--output_path", str(out), "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    assert len(samples["gtzan"]) == 3 and "acc,none" in results["results"]["gtzan"]
    assert "3 clip(s) longer than the model's limit of 1 s were trimmed to their first 1 s" in (
        done.stderr
    )
    assert "[0-1.5 s] (1.5 s) and 2 other clip(s)" in done.stderr


def test_reports_first_line_counts_tagging_tasks(tiny_lm, tagging_data, tmp_path, capsys):
    from lm_eval_rul.cli import main

    out = tmp_path / "gtzan"
    main(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
          "--tasks", "gtzan", "--limit", "4", "--metadata", json.dumps(tagging_data),
          "--device", "cpu", "--batch_size", "16", "--output_path", str(out),
          "--log_samples"])  # fmt: skip
    capsys.readouterr()
    main(["report", str(out), "--out", str(tmp_path / "report"), "--n-resamples", "50"])
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "1 run, 0 benchmarks, 0 factual tasks, 1 tagging task"
