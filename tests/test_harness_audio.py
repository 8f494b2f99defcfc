"""``lalm`` serves every request the harness sends: plain lm-eval audio tasks
(``doc_to_audio``), text tasks beside ours, and bad harness audio refused in one line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

SR_GIVEN = 8_000  # the tasks' own rate: the model (16 kHz) resamples


def _wave(kind: int, seconds: float = 1.0) -> list[float]:
    t = np.arange(int(seconds * SR_GIVEN)) / SR_GIVEN
    return (0.3 * np.sin(2 * np.pi * (220 + 110 * kind) * t)).astype(np.float32).tolist()


def write_plain_tasks(root: Path) -> Path:
    """Plain lm-eval YAML tasks written the harness's own way (no lm_eval_rul code):
    ``plain_audio_mc`` (doc_to_audio: a feature name), ``plain_audio_gen`` (doc_to_audio:
    a function, as lm-eval's common_voice_en) and ``plain_text_mc`` (no audio)."""
    root.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "question": f"Which instrument plays in clip {i}?",
            "audio": {"array": _wave(i % 2), "sampling_rate": SR_GIVEN},
            "answer": i % 4,
        }
        for i in range(4)
    ]
    (root / "audio.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    text_rows = [{"question": f"What is {i} plus {i}?", "answer": i % 4} for i in range(3)]
    (root / "text.jsonl").write_text("\n".join(json.dumps(r) for r in text_rows) + "\n")
    (root / "utils.py").write_text(
        textwrap.dedent(
            """
            import numpy as np

            def doc_to_audio(doc):
                return [{"array": np.asarray(doc["audio"]["array"]),
                         "sampling_rate": doc["audio"]["sampling_rate"]}]
            """
        )
    )
    common = textwrap.dedent(
        f"""
        dataset_path: json
        dataset_kwargs:
          data_files:
            test: {root / "audio.jsonl"}
        test_split: test
        doc_to_text: "<audio> {{{{question}}}}\\nAnswer:"
        """
    )
    (root / "plain_audio_mc.yaml").write_text(
        "task: plain_audio_mc\n" + common + textwrap.dedent(
            """
            output_type: multiple_choice
            doc_to_audio: audio
            doc_to_choice: ["A", "B", "C", "D"]
            doc_to_target: answer
            metric_list:
              - metric: acc
            """
        )
    )
    (root / "plain_audio_gen.yaml").write_text(
        "task: plain_audio_gen\n" + common + textwrap.dedent(
            """
            output_type: generate_until
            doc_to_audio: !function utils.doc_to_audio
            doc_to_target: "{{answer}}"
            generation_kwargs:
              until: ["\\n"]
              max_gen_toks: 4
              do_sample: false
            metric_list:
              - metric: exact_match
            """
        )
    )
    (root / "plain_text_mc.yaml").write_text(
        textwrap.dedent(
            f"""
            task: plain_text_mc
            dataset_path: json
            dataset_kwargs:
              data_files:
                test: {root / "text.jsonl"}
            test_split: test
            output_type: multiple_choice
            doc_to_text: "{{{{question}}}}\\nAnswer:"
            doc_to_choice: ["A", "B", "C", "D"]
            doc_to_target: answer
            metric_list:
              - metric: acc
            """
        )
    )
    return root


@pytest.fixture(scope="module")
def plain_tasks(tmp_path_factory) -> Path:
    return write_plain_tasks(tmp_path_factory.mktemp("plain_tasks"))


def _evaluate(model_path: Path, include: Path, tasks: list[str], **model_args: str) -> dict:
    import lm_eval
    from lm_eval.tasks import TaskManager

    import lm_eval_rul  # noqa: F401 - registers lalm

    args = ",".join(
        f"{k}={v}"
        for k, v in {
            "pretrained": model_path,
            "dtype": "float32",
            "results_cache": "none",
            **model_args,
        }.items()
    )
    return lm_eval.simple_evaluate(
        model="lalm",
        model_args=args,
        tasks=tasks,
        task_manager=TaskManager(include_path=str(include)),
        device="cpu",
        log_samples=True,
    )


def _logliks(results: dict, task: str) -> list[float]:
    return [r[0][0] for s in results["samples"][task] for r in s["resps"]]


def test_plain_doc_to_audio_tasks_run_under_lalm_and_noise_changes_them(
    tiny_audio_lm, plain_tasks
):
    tasks = ["plain_audio_mc", "plain_audio_gen"]
    heard = _evaluate(tiny_audio_lm, plain_tasks, tasks)
    noise = _evaluate(tiny_audio_lm, plain_tasks, ["plain_audio_mc"], audio="noise")
    assert set(heard["results"]) >= set(tasks)
    assert len(heard["samples"]["plain_audio_gen"]) == 4
    assert all(isinstance(s["resps"][0][0], str) for s in heard["samples"]["plain_audio_gen"])
    original, noisy = _logliks(heard, "plain_audio_mc"), _logliks(noise, "plain_audio_mc")
    assert len(original) == len(noisy) == 16
    assert all(np.isfinite(original))
    assert original != pytest.approx(noisy, abs=1e-6)
    assert heard["config"]["audio_condition_by_task"]["plain_audio_mc"] == "original"
    assert noise["config"]["audio_condition_by_task"] == {"plain_audio_mc": "noise"}


@pytest.fixture(scope="module")
def lalm(tiny_audio_lm):
    from lm_eval_rul.models.lalm import LALM

    return LALM(pretrained=str(tiny_audio_lm), dtype="float32", device="cpu", results_cache="none")


def _letters(doc_id: int, audio, task: str = "plain_audio_mc") -> list:
    """The four letter requests of one question, built as lm-eval 0.4.13 builds them."""
    from lm_eval.api.instance import Instance

    extra = {"audio": audio}
    return [
        Instance(
            request_type="loglikelihood",
            doc={"question": f"q{doc_id}"},
            arguments=(f"<audio> Question {doc_id}?\nAnswer:", f" {letter}", extra),
            idx=i,
            metadata=(task, doc_id, 1),
        )
        for i, letter in enumerate("ABCD")
    ]


def test_harness_clips_keep_one_prefix_per_clip(lalm):
    """Two questions on one clip (two copies of the same array) and one on another: two
    audio encodes, one forward per question beside the prefixes."""
    from lm_eval_rul.testing.counters import ForwardCounter

    same = [{"array": np.asarray(_wave(0)), "sampling_rate": SR_GIVEN} for _ in range(2)]
    other = {"array": np.asarray(_wave(1)), "sampling_rate": SR_GIVEN}
    requests = _letters(0, [same[0]]) + _letters(1, [same[1]]) + _letters(2, [other])
    with ForwardCounter(lalm.model) as counts:
        scores = lalm.loglikelihood(requests, disable_tqdm=True)
    assert len(scores) == 12 and all(np.isfinite(s) for s, _ in scores)
    assert counts.audio == 2
    assert counts.language == 2 + 3


def test_several_clips_in_one_request_are_all_heard(lalm):
    one = {"array": np.asarray(_wave(0)), "sampling_rate": SR_GIVEN}
    two = {"array": np.asarray(_wave(1)), "sampling_rate": SR_GIVEN}
    single = [s for s, _ in lalm.loglikelihood(_letters(0, [one]), disable_tqdm=True)]
    double = [s for s, _ in lalm.loglikelihood(_letters(0, [one, two]), disable_tqdm=True)]
    assert lalm.prompt_text("Q", clips=2).count(lalm.placeholder) == 2
    assert single != pytest.approx(double, abs=1e-6)


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("clips/0.wav", "'clips/0.wav'"),
        ([{"array": [0.1, 0.2]}], "{'array': [0.1, 0.2]}"),
        ([{"array": np.zeros(0, dtype=np.float32), "sampling_rate": 16000}], "shape (0,)"),
    ],
    ids=["path", "no_sampling_rate", "empty_array"],
)
def test_bad_harness_audio_is_one_line_before_any_model_call(lalm, given, shown):
    from lm_eval_rul.audio.requests import HarnessAudioError
    from lm_eval_rul.testing.counters import ForwardCounter

    good = [{"array": np.asarray(_wave(0)), "sampling_rate": SR_GIVEN}]
    requests = _letters(0, good) + _letters(1, given)
    with ForwardCounter(lalm.model) as counts, pytest.raises(HarnessAudioError) as error:
        lalm.loglikelihood(requests, disable_tqdm=True)
    message = str(error.value)
    assert "\n" not in message
    assert "task 'plain_audio_mc', document 1" in message
    assert shown in message
    assert counts.audio == counts.language == 0


def test_text_task_beside_ours_in_one_lalm_run_and_heard_fields(
    tiny_audio_lm, plain_tasks, audio_data, tmp_path
):
    """The issue's `--tasks my_text_task,rul_muchomusic_fold0` (MissingAudioError before):
    the text task is answered from text alone and says so; a noise run's samples name what
    was heard (audio_heard) and the clip it replaced (audio_replaced)."""
    from lm_eval_rul.testing.harness import read_output, run_cli

    out = tmp_path / "out"
    done = run_cli(
        [
            "run", "--model", "lalm",
            "--model_args", f"pretrained={tiny_audio_lm},dtype=float32,audio=noise,"
            "noise_seconds=1,results_cache=none",
            "--tasks", "plain_text_mc,rul_muchomusic_fold0",
            "--include_path", str(plain_tasks),
            "--metadata", json.dumps(audio_data),
            "--device", "cpu", "--limit", "3", "--log_samples", "--output_path", str(out),
        ]
    )  # fmt: skip
    results, samples = read_output(out)
    assert {"plain_text_mc", "rul_muchomusic_fold0"} <= set(results["results"])
    by_task = results["config"]["audio_condition_by_task"]
    assert by_task["rul_muchomusic_fold0"] == "noise"
    assert by_task["plain_text_mc"].startswith("not applied (text task")
    assert "task plain_text_mc gives no audio" in done.stderr + done.stdout
    for sample in samples["rul_muchomusic_fold0"]:
        doc = sample["doc"]
        assert doc["audio_heard"].startswith("noise (seed 0, item ")
        assert Path(doc["audio_replaced"]).parent == Path(audio_data["audio_dir"]).resolve()
        assert Path(doc["audio_replaced"]).is_file()
    assert all("audio_heard" not in s["doc"] for s in samples["plain_text_mc"])


def test_lalm_api_serves_harness_audio_and_text_requests_as_lalm_does(lalm, tiny_audio_lm):
    from doubles.openai_server import OpenAIAudioServer
    from lm_eval.api.instance import Instance

    from lm_eval_rul.models.api import LALMAPI

    clip = [{"array": np.asarray(_wave(1)), "sampling_rate": SR_GIVEN}]
    text = [
        Instance(
            request_type="loglikelihood",
            doc={"question": "2+2"},
            arguments=("What is 2+2?\nAnswer:", f" {letter}"),
            idx=i,
            metadata=("plain_text_mc", 0, 1),
        )
        for i, letter in enumerate("ABCD")
    ]
    requests = _letters(0, clip) + text
    expected = lalm.loglikelihood(requests, disable_tqdm=True)
    with OpenAIAudioServer(tiny_audio_lm, served_model="tiny") as server:
        api = LALMAPI(
            base_url=server.url, model="tiny", results_cache="none", wav_subtype="FLOAT"
        )
        got = api.loglikelihood(requests, disable_tqdm=True)
        bodies = list(server.answered)
    assert [ll for ll, _ in got] == pytest.approx([ll for ll, _ in expected], abs=1e-4)
    users = [m for body in bodies for m in body["messages"] if m["role"] == "user"]
    kinds = [[p["type"] for p in message["content"]] for message in users]
    assert sorted(map(tuple, kinds)) == sorted([("audio", "text")] * 4 + [("text",)] * 4)
    assert api.get_model_info()["audio_condition_by_task"]["plain_text_mc"].startswith(
        "not applied"
    )


def test_random_plays_another_clip_of_the_same_task():
    from lm_eval_rul.audio import AudioError, AudioSpec
    from lm_eval_rul.audio.requests import request_audio

    clips = [{"array": np.asarray(_wave(k, 0.5)), "sampling_rate": SR_GIVEN} for k in (0, 1)]
    requests = _letters(0, [clips[0]])[:1] + _letters(1, [clips[1]])[:1]
    spec = AudioSpec(sampling_rate=16_000, max_seconds=None, condition="random", seed=3)
    own = [s.key(AudioSpec(sampling_rate=16_000, max_seconds=None)) for s in
           request_audio(requests, spec)]
    heard = [s.key(spec) for s in request_audio(requests, spec)]
    assert heard == [own[1], own[0]]  # two clips: each question hears the other one
    alone = _letters(2, [clips[0]], task="one_clip_task")[:1]
    with pytest.raises(AudioError, match="another track"):
        request_audio(alone, spec)[0].key(spec)


def test_results_cache_is_keyed_by_the_harness_audio(tiny_audio_lm, tmp_path):
    from lm_eval_rul.models.lalm import LALM
    from lm_eval_rul.testing.counters import ForwardCounter

    def model():
        return LALM(
            pretrained=str(tiny_audio_lm),
            dtype="float32",
            device="cpu",
            results_cache=str(tmp_path / "results.sqlite"),
        )

    clip = [{"array": np.asarray(_wave(0)), "sampling_rate": SR_GIVEN}]
    other = [{"array": np.asarray(_wave(1)), "sampling_rate": SR_GIVEN}]
    first = model().loglikelihood(_letters(0, clip), disable_tqdm=True)
    again = model()
    with ForwardCounter(again.model) as counts:
        assert again.loglikelihood(_letters(0, clip), disable_tqdm=True) == first
    assert counts.language == 0  # read back: the same samples were heard
    with ForwardCounter(again.model) as counts:
        changed = again.loglikelihood(_letters(0, other), disable_tqdm=True)
    assert counts.audio == 1 and changed != first  # other samples: computed again
