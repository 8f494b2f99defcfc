"""Write what an offline smoke test needs: ``python -m lm_eval_rul.testing.smoke DIR``.

Without hub access, a user (or their CI) checks an install end to end on tiny local files:
``DIR/text_model`` (a random-weight ``Qwen2ForCausalLM``), ``DIR/audio_model`` (a
random-weight ``Qwen2AudioForConditionalGeneration`` with its real processor), and
``DIR/data`` (8 RUL-MuChoMusic questions, their MuChoMusic CSV and one synthesised clip per
track). It prints the ``lm-eval-rul run`` commands that use them (docs/errors.md, "Offline").

The audio model must show the listening test doing something: with the test fixtures'
tiny audio model the audio moves a letter's log-likelihood by ~0.01 and never changes a
letter, so ``original``, ``noise`` and ``silence`` read the same. Its random weights are
kept (no training), but the language model's attention value and output projections are
scaled by :data:`AUDIO_GAIN`: the audio reaches the letter only through the question's
attention to the audio positions, which at the default initialisation adds a hundredth of
the residual stream; scaled, it moves letters (``tests/test_smoke_models.py``). The test
fixtures keep the unscaled model, whose numbers other tests read.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from ..errors import UserInputError

__all__ = [
    "AUDIO_GAIN",
    "SmokeDirectoryError",
    "check_smoke_directory",
    "make_smoke_audio_lm",
    "write_smoke_models",
    "main",
]

#: Factor on the language model's attention value and output projections.
AUDIO_GAIN = 10.0
#: The folders :func:`write_smoke_models` writes under DIR (``data/audio``: the clips).
SMOKE_FOLDERS = ("text_model", "audio_model", "data", "data/audio")


class SmokeDirectoryError(UserInputError):
    """The smoke command's DIR (or a folder it writes there) is taken by a file."""


def check_smoke_directory(directory: str | Path) -> Path:
    """``directory`` resolved, after checking that it and every folder the smoke command
    writes in it are folders or absent (none is a file, none lies below a file).

    Raises:
        SmokeDirectoryError: one of them is a file (or below one).
    """
    root = Path(directory).expanduser().resolve()
    for parent in (root, *root.parents):
        if parent.exists() and not parent.is_dir():
            below = "" if parent == root else f" ({root} lies below it)"
            raise SmokeDirectoryError(
                f"python -m lm_eval_rul.testing.smoke {directory}: {parent} is a file, not a "
                f"folder{below}; give a folder (new or existing) to write the smoke files in"
            )
        if parent.is_dir():
            break
    for name in SMOKE_FOLDERS:
        folder = root / name
        if folder.exists() and not folder.is_dir():
            raise SmokeDirectoryError(
                f"python -m lm_eval_rul.testing.smoke {directory}: {folder} is a file where the "
                f"smoke command writes its {name}/ folder; move it away or give another DIR"
            )
    return root


def make_smoke_audio_lm(directory: str | Path, *, gain: float = AUDIO_GAIN) -> Path:
    """The tiny Qwen2-Audio of :func:`~lm_eval_rul.testing.audio.make_tiny_audio_lm`, its
    attention value/output projections scaled by ``gain`` so the audio changes letters."""
    import torch
    from transformers import Qwen2AudioForConditionalGeneration

    from .audio import make_tiny_audio_lm

    path = make_tiny_audio_lm(directory, "qwen2_audio")
    model = Qwen2AudioForConditionalGeneration.from_pretrained(path)
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if "language_model" in name and name.endswith(
                ("self_attn.v_proj.weight", "self_attn.o_proj.weight")
            ):
                weight.mul_(gain)
    model.save_pretrained(path)
    return path


def write_smoke_models(directory: str | Path) -> dict[str, Path]:
    """Write the text model, the audio model and the data under ``directory``.

    Returns:
        ``{"text_model": ..., "audio_model": ..., "metadata": data/metadata.json}``; the
        metadata file holds the ``--metadata`` of a run on the data.
    """
    from .audio import write_audio_benchmark
    from .text import make_tiny_causal_lm

    root = check_smoke_directory(directory)
    written = write_audio_benchmark(root / "data")
    metadata = {
        "data_path": written["rul_data_path"],
        "muchomusic_csv": written["muchomusic_csv"],
        "audio_dir": written["audio_dir"],
    }
    (root / "data" / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
    return {
        "text_model": make_tiny_causal_lm(root / "text_model"),
        "audio_model": make_smoke_audio_lm(root / "audio_model"),
        "metadata": root / "data" / "metadata.json",
    }


def commands(written: dict[str, Path]) -> list[str]:
    """The smoke test's commands: ``run`` on the text model, on the audio model under
    ``original`` and ``noise`` (each into ``DIR/runs/NAME``), then ``report`` on the three."""
    metadata = json.loads(written["metadata"].read_text())
    text_only = {k: v for k, v in metadata.items() if k != "audio_dir"}  # no clips for hf
    runs = written["metadata"].parent.parent / "runs"
    models = {
        "text": ("hf", f"pretrained={written['text_model']}", text_only),
        "original": ("lalm", f"pretrained={written['audio_model']},audio=original", metadata),
        "noise": ("lalm", f"pretrained={written['audio_model']},audio=noise", metadata),
    }
    lines = [
        f"HF_HUB_OFFLINE=1 lm-eval-rul run --model {model} --model_args {shlex.quote(args)} "
        "--tasks rul_muchomusic --device cpu --batch_size 4 --log_samples "
        f"--output_path {shlex.quote(str(runs / name))} --metadata {shlex.quote(json.dumps(meta))}"
        for name, (model, args, meta) in models.items()
    ]
    folders = " ".join(shlex.quote(str(runs / name)) for name in models)
    report = shlex.quote(str(runs.parent / "report"))
    return [*lines, f"lm-eval-rul report {folders} --out {report}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lm_eval_rul.testing.smoke",
        description="Write a tiny text model, a tiny audio model and 8 questions with "
        "synthesised clips for an offline smoke test; print the commands that run them.",
    )
    parser.add_argument("directory", help="where to write text_model/, audio_model/, data/")
    args = parser.parse_args(argv)
    try:
        written = write_smoke_models(args.directory)
    except SmokeDirectoryError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (NotADirectoryError, FileExistsError) as error:  # a file made there meanwhile
        print(f"error: python -m lm_eval_rul.testing.smoke {args.directory}: {error}; "
              "give a folder without files in the way", file=sys.stderr)
        return 2
    data = written["metadata"].parent  # the commands below carry its --metadata inline
    print(f"wrote {written['text_model']}, {written['audio_model']} and 8 questions with "
          f"their clips in {data}")
    print("offline smoke test (original and noise give different letters; report compares them):")
    for line in commands(written):
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
