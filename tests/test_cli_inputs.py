"""Command-line mistakes found in a fresh-user walkthrough: each is one error line, exit
status 2, and no model constructed (``HFLM.__init__`` is counted; ``lalm`` extends it)."""

from __future__ import annotations

import json
import logging
import re
import socket
from pathlib import Path

import pytest

from lm_eval_rul.cli.run_inputs import (
    HARNESS_METADATA_KEYS,
    UnknownMetadataKeyError,
    check_metadata_keys,
    family_metadata_keys,
)
from lm_eval_rul.testing.harness import cli_error_line as fail
from lm_eval_rul.testing.harness import read_output, run_cli, text_run_args


def with_metadata(argv: list[str], **extra) -> list[str]:
    """``argv`` with keys added to its ``--metadata`` JSON."""
    argv = list(argv)
    at = argv.index("--metadata") + 1
    argv[at] = json.dumps({**json.loads(argv[at]), **extra})
    return argv


def test_misspelt_metadata_key_is_refused_with_the_closest_and_the_known_keys(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    argv = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic")
    argv = with_metadata(argv, shufle_seed=3)
    line = fail(argv, capsys)
    assert "UnknownMetadataKeyError: unknown --metadata key 'shufle_seed'" in line
    assert "did you mean 'shuffle_seed'?" in line
    assert "Known keys: " in line and "audio_dir" in line and "rul_data_path" in line
    assert constructions == []


def test_audio_key_typo_is_refused_too(tiny_lm, data_dir, tmp_path, capsys, constructions):
    argv = with_metadata(text_run_args(tiny_lm, data_dir, tmp_path, "muchomusic"), audio_dri="x")
    assert "did you mean 'audio_dir'?" in fail(argv, capsys)
    assert constructions == []


def test_known_keys_depend_on_the_requested_families():
    keys = family_metadata_keys()
    factual, mcqa = set(keys["factual"]), set(keys["muchomusic"])
    assert {"on_audio_problem", "chunk_seconds", "ocremix_tags"} <= factual
    assert {"shuffle_seed", "parser", "audio_hf_dataset"} <= mcqa
    # factual keys are refused for a MuChoMusic run, and accepted once a factual task is added
    with pytest.raises(UnknownMetadataKeyError, match="'chunk_seconds'"):
        check_metadata_keys({"chunk_seconds": 30}, "muchomusic")
    check_metadata_keys({"chunk_seconds": 30, "data_path": "x"}, "muchomusic,factual_mood_open")
    check_metadata_keys({key: 1 for key in HARNESS_METADATA_KEYS}, ["rul_muchomusic_gen"])


def test_a_task_of_another_package_turns_the_key_check_off():
    check_metadata_keys({"max_seq_lengths": [4096]}, "rul_muchomusic,niah_single_1")


def test_single_quoted_metadata_says_json_needs_double_quotes(tiny_lm, capsys):
    line = fail(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--tasks",
         "rul_muchomusic", "--metadata", "{'data_path': 'rul.json'}"],
        capsys,
    )  # fmt: skip
    assert line.startswith("lm-eval-rul run: error: MetadataJSONError:")
    assert "not valid JSON" in line and "at character 2" in line
    assert "JSON needs double quotes" in line


def test_misspelt_model_names_the_closest_registered(tiny_lm, data_dir, tmp_path, capsys):
    argv = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic")
    argv[argv.index("--model") + 1] = "hff"
    line = fail(argv, capsys)
    assert "UnknownModelError: --model 'hff' is not a registered model. Closest: hf" in line
    assert "lalm-api" in line


def test_cuda_device_without_cuda_suggests_cpu(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    import torch

    if torch.cuda.is_available():  # the check must then let the run through
        from lm_eval_rul.cli.run_inputs import check_device

        check_device("cuda")
        return
    argv = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic")
    argv[argv.index("--device") + 1] = "cuda"
    line = fail(argv, capsys)
    assert "DeviceUnavailableError: --device cuda:" in line and "--device cpu" in line
    assert constructions == []


def test_audio_lm_checkpoint_with_hf_says_use_lalm(
    tiny_audio_lm, data_dir, tmp_path, capsys, constructions
):
    line = fail(text_run_args(tiny_audio_lm, data_dir, tmp_path, "rul_muchomusic"), capsys)
    assert "ModelKindError: --model hf with pretrained=" in line
    assert "this is an audio LM (Qwen2-Audio, model_type='qwen2_audio')" in line
    assert "Use --model lalm" in line
    assert constructions == []


def test_text_checkpoint_with_lalm_says_no_audio_encoder_before_missing_audio(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    argv = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic")  # and no audio_dir
    argv[argv.index("--model") + 1] = "lalm"
    line = fail(argv, capsys)
    assert "ModelKindError: --model lalm with pretrained=" in line
    assert "has no audio encoder" in line and "Use --model hf" in line
    assert constructions == []


def test_missing_factual_audio_suggests_the_skip_metadata_and_it_works(tmp_path):

    from lm_eval_rul.factual.datasets.sources import prepare_task
    from lm_eval_rul.factual.errors import AudioFilesError
    from lm_eval_rul.testing.factual import write_factual_datasets

    metadata = write_factual_datasets(tmp_path / "data")
    first = sorted(p for p in (tmp_path / "data" / "ocremix").iterdir() if p.suffix == ".mp3")[0]
    first.unlink()
    with pytest.raises(AudioFilesError) as caught:
        prepare_task("mood", metadata, condition="original")
    message = str(caught.value)
    assert "pass sample_size" in message  # the earlier advice stays
    suggested = re.search(r"""--metadata '\{\.\.\., (".*?")\}'""", message)
    assert suggested, message
    key, value = json.loads("{" + suggested.group(1) + "}").popitem()
    check_metadata_keys({key: value}, "factual_mood_open")  # a key the tasks read
    prepared = prepare_task("mood", {**metadata, key: value}, condition="original")
    assert prepared.dropped == {"audio_missing": 1}


@pytest.fixture
def offline_empty_cache(monkeypatch, tmp_path):
    """``HF_HUB_OFFLINE=1`` and an empty Hugging Face cache."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty_hub_cache"))


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["pi", "--data", "DATA", "--model", "hf", "--model_args", "pretrained=Qwen/Nope",
          "--output", "OUT"], "--model_args"),
        (["build", "--data", "DATA", "--generator", "hf", "--generator_args",
          "pretrained=Qwen/Nope", "--stage", "generate", "--output", "OUT"], "--generator_args"),
        (["diagnose", "DATA", "--no_similarity", "--judge", "hf", "--judge_args",
          "pretrained=Qwen/Nope", "--out", "OUT"], "--judge_args"),
    ],
)  # fmt: skip
def test_unavailable_model_names_the_subcommands_own_flag(
    argv, flag, data_dir, tmp_path, capsys, offline_empty_cache, constructions
):
    argv = [str(data_dir / "rul.json") if a == "DATA" else a for a in argv]
    argv = [str(tmp_path / "out.json") if a == "OUT" else a for a in argv]
    line = fail(argv, capsys)
    assert f"ModelUnavailableError: {flag} pretrained='Qwen/Nope' is not in the local" in line
    assert f"give local folders: {flag} pretrained=/path/to/model" in line
    assert "--metadata" not in line  # run's data advice; these commands read local files
    assert constructions == []


def test_run_offline_advice_keeps_the_metadata_hint(
    tiny_lm, data_dir, tmp_path, capsys, offline_empty_cache
):
    argv = text_run_args("Qwen/Nope", data_dir, tmp_path, "rul_muchomusic")
    line = fail(argv, capsys)
    assert "--model_args pretrained='Qwen/Nope'" in line and "--metadata '{\"data_path\"" in line


@pytest.mark.parametrize("command", ["pi", "build"])
def test_pi_and_build_refuse_audio_models_before_loading(
    command, tiny_audio_lm, data_dir, tmp_path, capsys, constructions
):
    source = ["--data", data_dir / "rul.json"]
    if command == "build":
        source = ["--pools", data_dir / "pools.json"]
    base = [command, *source, "--output", tmp_path / "out.json"]
    line = fail([*base, "--model", "lalm", "--model_args", f"pretrained={tiny_audio_lm}"], capsys)
    assert f"ModelKindError: {command} scores text-only prompts" in line
    assert "not --model lalm. Use --model hf" in line and "audio=none" in line
    line = fail([*base, "--model", "hf", "--model_args", f"pretrained={tiny_audio_lm}"], capsys)
    assert "is an audio LM (Qwen2-Audio), which --model hf cannot load" in line
    line = fail([*base, "--model", "hf", "--model_args", "pretrained=x,audio=noise"], capsys)
    assert "ModelArgsError: --model hf does not take model_args audio=noise" in line
    line = fail([*base, "--model", "hff"], capsys)
    assert "UnknownModelError: --model 'hff'" in line
    assert constructions == []


def test_multi_token_letters_are_one_warning_per_run(tmp_path, audio_data):
    """lalm with a tokenizer that spells each letter as two tokens: the pre-flight check
    and the model's own check, over 5 tasks (4 folds + MuChoMusic), say it in ONE line."""
    from lm_eval_rul.testing.audio import make_tiny_audio_lm

    model = make_tiny_audio_lm(tmp_path / "split", "qwen2_audio", merge_letters=False)
    done = run_cli(
        ["run", "--model", "lalm", "--model_args", f"pretrained={model},dtype=float32",
         "--tasks", "rul_muchomusic,muchomusic", "--metadata", json.dumps(audio_data),
         "--device", "cpu", "--limit", "1"],
    )  # fmt: skip
    lines = [line for line in done.stderr.splitlines() if "tokens for this tokenizer" in line]
    assert len(lines) == 1, "\n".join(lines)
    for letter in "ABCD":
        assert f"' {letter}' = " in lines[0]


@pytest.fixture
def no_network_hub(monkeypatch):
    """The hub client online, pointed at a closed loopback port, with an empty cache;
    returns its back-off sleeps (one before each retried request)."""

    import huggingface_hub.utils._http as hub_http
    from huggingface_hub import constants

    with socket.socket() as probe:  # a port nobody listens on: connection refused
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    template = endpoint + "/{repo_id}/resolve/{revision}/{filename}"
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", "/nonexistent-cache")
    monkeypatch.setenv("HF_HUB_CACHE", "/nonexistent-cache")
    slept: list[float] = []
    monkeypatch.setattr(hub_http.time, "sleep", slept.append)
    return slept


def test_diagnose_encoder_without_network_fails_at_once(data_dir, tmp_path, capsys, no_network_hub):
    line = fail(
        ["diagnose", data_dir / "rul.json", "--t5", "acme/t5-small", "--clap", "none",
         "--no_cache", "--out", tmp_path / "out"],
        capsys,
    )  # fmt: skip
    assert "ModelUnavailableError: --t5='acme/t5-small' cannot be downloaded" in line
    assert "is not reachable" in line and "--t5 /path/to/model" in line
    assert no_network_hub == []  # one request, no retry


def test_misspelt_lalm_model_arg_suggests_the_name_meant(tiny_audio_lm, data_dir, tmp_path, capsys):
    argv = text_run_args(tiny_audio_lm, data_dir, tmp_path, "rul_muchomusic")
    argv[argv.index("--model") + 1] = "lalm"
    argv[argv.index("--model_args") + 1] += ",audio_condition=noise"
    line = fail(argv, capsys)
    assert "lalm: unknown model_args audio_condition. Did you mean audio? Supported: " in line
    assert "noise_std" in line.split("Supported: ", 1)[1]  # the valid names are still listed


def test_two_misspelt_model_args_each_get_their_suggestion():
    from lm_eval_rul.models.args import UnknownModelArgsError, validate_model_args
    from lm_eval_rul.models.lalm import LALM

    with pytest.raises(UnknownModelArgsError) as caught:
        validate_model_args({"audios": "noise", "nosie_std": 2, "zzz": 1}, LALM)
    assert "unknown model_args audios, nosie_std, zzz. Did you mean audio (for audios), " \
        "noise_std (for nosie_std)? Supported:" in str(caught.value)


@pytest.mark.parametrize(("word", "nearest"), [("reprot", "report"), ("biuld", "build")])
def test_misspelt_command_word_is_unknown_with_the_nearest_and_the_list(word, nearest, capsys):
    line = fail([word, "runs/"], capsys)
    assert line.startswith(f"lm-eval-rul: error: UnknownCommandError: unknown command '{word}'")
    assert f"did you mean {nearest}?" in line
    assert "The commands: run, ls, validate, " in line and "diagnose" in line


def test_bare_harness_form_still_means_run(tiny_lm, capsys):
    line = fail(["--model", "hff", "--model_args", f"pretrained={tiny_lm}",
                 "--tasks", "rul_muchomusic"], capsys)  # fmt: skip
    assert line.startswith("lm-eval-rul run: error: UnknownModelError: --model 'hff'")


@pytest.mark.parametrize("limit", ["-1", "0", "2.5", "nan"])
def test_run_limit_that_selects_nothing_is_one_line(
    limit, tiny_lm, data_dir, tmp_path, capsys, constructions
):
    args = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic", "--limit", limit)
    line = fail(args, capsys)
    assert f"LimitError: --limit {limit}: give a whole number of documents per task" in line
    assert constructions == []


@pytest.mark.parametrize("limit", ["-1", "0"])
def test_pi_limit_that_selects_nothing_is_one_line(
    limit, tiny_lm, data_dir, tmp_path, capsys, constructions
):
    args = ["pi", "--data", data_dir / "rul.json", "--model", "hf",
            "--model_args", f"pretrained={tiny_lm}", "--output", tmp_path / "pi.jsonl",
            "--limit", limit]  # fmt: skip
    line = fail(args, capsys)
    assert f"LimitError: --limit {limit}: give how many questions" in line
    assert constructions == [] and not (tmp_path / "pi.jsonl").exists()


def test_run_limit_fraction_is_still_the_harness_share():
    from lm_eval_rul.cli.limits import check_run_limit

    for fine in (None, 0.5, "0.1", 3, "40", 40.0):
        check_run_limit(fine)


@pytest.mark.parametrize("command", ["run", "pi"])
def test_several_processes_without_gpus_stop_before_the_model(
    command, tiny_lm, data_dir, tmp_path, capsys, constructions, monkeypatch
):
    # as torchrun --nproc_per_node 2 sets them, in the second process
    for name, value in {"WORLD_SIZE": "2", "RANK": "1", "LOCAL_RANK": "1"}.items():
        monkeypatch.setenv(name, value)
    if command == "run":
        args = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic")
    else:
        args = ["pi", "--data", data_dir / "rul.json", "--model", "hf", "--model_args",
                f"pretrained={tiny_lm}", "--output", tmp_path / "pi.jsonl"]  # fmt: skip
    line = fail(args, capsys)
    assert "DataParallelError: 2 processes were launched (WORLD_SIZE=2, this is RANK=1)" in line
    assert "splits documents across processes only on GPUs" in line
    assert constructions == []


def hf_run(model: str | Path, data_dir: Path, tmp_path: Path, tasks: str = "rul_muchomusic"):
    """``run --model hf`` arguments on the fixture files."""
    return text_run_args(model, data_dir, tmp_path / "out", tasks, batch_size=2)


def test_data_path_typo_with_hf_fails_before_the_model(tiny_lm, tmp_path, capsys, constructions):
    line = fail(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--tasks",
         "rul_muchomusic", "--metadata", '{"data_path": "RUL-MuchoMusic.jsn"}'],
        capsys,
    )  # fmt: skip
    assert "data_path='RUL-MuchoMusic.jsn': no such file" in line
    assert constructions == []


def test_unknown_task_names_the_closest(tiny_lm, data_dir, tmp_path, capsys, constructions):
    line = fail(hf_run(tiny_lm, data_dir, tmp_path, tasks="rul_muchomusc"), capsys)
    assert "UnknownTaskError: unknown task 'rul_muchomusc' (closest: rul_muchomusic" in line
    assert "lm-eval-rul ls tasks" in line
    # the entry points only: groups and stand-alone tasks, not the tasks inside a group
    listed = line.split("This plugin's groups and tasks: ", 1)[1].split(";", 1)[0].split(", ")
    assert {"rul_muchomusic", "muchomusic", "factual", "factual_robustness"} <= set(listed)
    assert "rul_muchomusic_fold0" not in listed and "factual_instrument_open" not in listed
    assert constructions == []


def test_a_task_named_twice_names_both_names(tiny_lm, data_dir, tmp_path, capsys, constructions):
    args = hf_run(tiny_lm, data_dir, tmp_path, tasks="rul_muchomusic,rul_muchomusic_fold1")
    line = fail(args, capsys)
    assert "DuplicateTaskError: --tasks names one task twice: task 'rul_muchomusic_fold1'" in line
    assert "'rul_muchomusic' and 'rul_muchomusic_fold1'" in line
    assert constructions == []


def test_lalm_model_arg_on_hf_names_the_arg_and_its_model(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    args = hf_run(tiny_lm, data_dir, tmp_path)
    args[args.index("--model_args") + 1] += ",audio=noise,noise_std=2"
    line = fail(args, capsys)
    assert "--model hf does not take model_args audio=noise, noise_std=2" in line
    assert "arguments of --model lalm" in line
    assert constructions == []


def test_data_file_of_the_other_benchmark_says_which_file_each_task_wants(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    line = fail(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--tasks", "muchomusic",
         "--metadata", json.dumps({"data_path": str(data_dir / "rul.json")})],
        capsys,
    )  # fmt: skip
    assert "data_path is the RUL-MuChoMusic JSON" in line
    assert "muchomusic* tasks read MuChoMusic's CSV (muchomusic.csv" in line
    assert constructions == []


def test_misspelt_task_is_one_line_on_either_harness(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    # lm-eval 0.5's match_tasks keeps an unmatched name; its loader raised a KeyError
    args = text_run_args(tiny_lm, data_dir, tmp_path / "out", "rul_muchomusc,muchomusic")
    line = fail(args, capsys)
    assert "UnknownTaskError: unknown task 'rul_muchomusc' (closest: rul_muchomusic" in line
    assert constructions == []


def test_task_name_wins_over_a_folder_of_that_name(
    tiny_lm, data_dir, tmp_path, monkeypatch, caplog, constructions
):
    from lm_eval_rul.cli import main

    (tmp_path / "muchomusic").mkdir()  # e.g. the clips folder
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING, logger="lm_eval_rul"):
        main(text_run_args(tiny_lm, data_dir, out, "muchomusic", "--limit", "2"))
    results, _ = read_output(out)
    assert results["results"]["muchomusic"]["acc,none"] >= 0
    assert constructions == ["HFLM"]
    warned = [r.getMessage() for r in caplog.records if "folder named" in r.getMessage()]
    assert warned == [
        "--tasks muchomusic: a folder named 'muchomusic' is in the current directory; running "
        "the task muchomusic, not the folder's YAML files (for those, give --tasks "
        "'muchomusic/*.yaml')"
    ]


def test_limit_one_is_one_document_and_the_run_says_how_many(
    tiny_lm, data_dir, tmp_path, caplog, capsys
):
    from lm_eval_rul.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "1 and 1.0 are counts: ONE document per task" in " ".join(
        capsys.readouterr().out.split()
    )
    out = tmp_path / "out"
    limits = logging.getLogger("lm_eval_rul.cli.limits")  # its own handler: the CLI's
    with caplog.at_level(logging.INFO, logger=limits.name):  # loggers do not propagate
        limits.addHandler(caplog.handler)
        try:
            main(text_run_args(tiny_lm, data_dir, out, "rul_muchomusic", "--limit", "1.0",
                               "--log_samples"))  # fmt: skip
        finally:
            limits.removeHandler(caplog.handler)
    records = {id(r): r for r in caplog.records if r.name == limits.name}  # one per record:
    said = [r.getMessage() for r in records.values()]  # the root's handler may see it too
    assert said == [
        "--limit 1 runs 1 of 8 documents in each of 4 tasks; a --limit of 1 or more counts "
        "documents per task (1.0 is one document), below 1 is a fraction"
    ]
    results, samples = read_output(out)
    assert {len(rows) for rows in samples.values()} == {1}


def test_a_key_no_task_of_the_group_reads_is_one_line(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    metadata = {"data_path": str(data_dir / "rul.json"), "gtzan_audio_dirr": "x"}
    line = fail(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                 "--tasks", "music_understanding", "--metadata", json.dumps(metadata),
                 "--output_path", str(tmp_path / "out")], capsys)  # fmt: skip
    assert "unknown --metadata key 'gtzan_audio_dirr' (did you mean 'gtzan_audio_dir'?)" in line
    assert "'data_path'" not in line.split("Known keys")[0]  # a member's key is known
    assert "rul_muchomusic" in line and "data_path" in line.split("Known keys")[1]
    assert constructions == []
