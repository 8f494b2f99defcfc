"""A benchmark as it is published, through ``music_mc`` with no conversion: the same 10
questions as JSON lines, a CSV (lettered choices, letter answer, ``audio_path``), a parquet
file with an ``Audio`` column and a ``save_to_disk`` folder in lmms-lab's names give the
same letter log-likelihoods under ``lalm``, and so do two ``benchmark_name`` values: only
the data changes the numbers."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from lm_eval_rul.testing.audio import synth_clip, write_clip

KINDS = ("tone", "chord", "clicks", "sweep")
LETTERS = "ABCD"


def _items() -> list[dict]:
    items = []
    for i in range(10):
        n = 3 if i % 3 == 0 else 4  # items with 3 and with 4 options
        choices = [f"answer {i}-{k}" for k in range(n)]
        items.append({"id": f"q{i}", "question": f"What is heard in clip {i}?",
                      "choices": choices, "answer": i % n})  # fmt: skip
    return items


def _rotated(choices: list[str], by: int) -> list[str]:
    return choices[by:] + choices[:by]  # the file lists the options in its own order


@pytest.fixture(scope="module")
def shapes(tmp_path_factory) -> dict[str, Path]:
    import datasets

    root = tmp_path_factory.mktemp("published")
    clips = root / "clips"
    items = _items()
    for i, item in enumerate(items):
        write_clip(clips / f"{item['id']}.wav", synth_clip(KINDS[i % 4], seconds=1.0, seed=i))
    jsonl = root / "bench.jsonl"
    jsonl.write_text("".join(json.dumps({**item, "choices": item["choices"],
                                         "answer": item["choices"][item["answer"]],
                                         "audio": f"clips/{item['id']}.wav"}) + "\n"
                             for item in items))  # fmt: skip
    sheet = root / "bench.csv"
    with sheet.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "question", "choice_a", "choice_b", "choice_c", "choice_d",
                         "answer", "audio_path"])  # fmt: skip
        for i, item in enumerate(items):
            shown = _rotated(item["choices"], i % 2 + 1)
            letter = LETTERS[shown.index(item["choices"][item["answer"]])]
            cells = shown + [""] * (4 - len(shown))
            writer.writerow([item["id"], item["question"], *cells, letter,
                             f"clips/{item['id']}.wav"])  # fmt: skip
    audio = [{"bytes": (clips / f"{it['id']}.wav").read_bytes(), "path": f"{it['id']}.wav"}
             for it in items]  # fmt: skip
    cell = {"bytes": datasets.Value("binary"), "path": datasets.Value("string")}
    parquet_table = datasets.Dataset.from_dict(
        {"id": [it["id"] for it in items], "question": [it["question"] for it in items],
         "choices": [list(reversed(it["choices"])) for it in items],
         "answer": [len(it["choices"]) - 1 - it["answer"] for it in items], "audio": audio},
        features=datasets.Features({"id": datasets.Value("string"),
                                    "question": datasets.Value("string"),
                                    "choices": datasets.Sequence(datasets.Value("string")),
                                    "answer": datasets.Value("int64"), "audio": cell}),
    ).cast_column("audio", datasets.Audio(decode=False))  # fmt: skip
    parquet = root / "bench.parquet"
    parquet_table.to_parquet(str(parquet))
    lmms = datasets.Dataset.from_dict(
        {"instruction": [it["question"] for it in items],  # lmms-lab's names: no id column
         "choices": ["\n".join(f"({LETTERS[k]}) {c}" for k, c in enumerate(it["choices"]))
                     for it in items],
         "answer": [f"({LETTERS[it['answer']]}) {it['choices'][it['answer']]}" for it in items],
         "context": audio},
        features=datasets.Features({"instruction": datasets.Value("string"),
                                    "choices": datasets.Value("string"),
                                    "answer": datasets.Value("string"), "context": cell}),
    ).cast_column("context", datasets.Audio(decode=False))  # fmt: skip
    folder = root / "lmms_saved"
    datasets.DatasetDict({"test": lmms}).save_to_disk(str(folder))
    return {"jsonl": jsonl, "csv": sheet, "parquet": parquet, "save_to_disk": folder}


def _letters(lm, metadata: dict) -> dict[str, tuple]:
    import lm_eval

    import lm_eval_rul

    out = lm_eval.simple_evaluate(
        model=lm, tasks=["music_mc"], log_samples=True,
        task_manager=lm_eval_rul.task_manager(include_defaults=False, **metadata),
    )  # fmt: skip
    samples = out["samples"]["music_mc"]
    return {
        s["doc"]["question"]: (tuple(s["doc"]["options"]), s["doc"]["gold"],
                               tuple(round(float(r[0]), 6) for r in s["filtered_resps"]))
        for s in samples
    }  # fmt: skip


def test_four_published_shapes_and_two_names_give_the_same_letters(tiny_audio_lm, shapes):
    from lm_eval.api.registry import get_model

    import lm_eval_rul  # noqa: F401  (registers lalm)

    lm = get_model("lalm").create_from_arg_string(
        f"pretrained={tiny_audio_lm},dtype=float32,results_cache=none",
        {"device": "cpu", "batch_size": 1},
    )
    runs = {
        name: _letters(lm, {"mc_data_path": str(path), "benchmark_name": "Tones-12"})
        for name, path in shapes.items()
    }
    runs["renamed"] = _letters(lm, {"mc_data_path": str(shapes["jsonl"]),
                                    "benchmark_name": "Tones-A"})  # fmt: skip
    reference = runs["jsonl"]
    assert len(reference) == 10
    assert sorted(len(options) for options, _, _ in reference.values()).count(3) == 4
    for name, letters in runs.items():
        assert letters == reference, name
    # the log-likelihoods are the model's: they differ between questions
    assert len({lls for _, _, lls in reference.values()}) == 10
