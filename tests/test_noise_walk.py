"""The walk of ``audio=noise`` from ``LALM.__init__`` to the waveform (docs/architecture.md,
"The walk of a condition"): the package files on the call stack wherever the condition is
read (``condition_named``), its spec built (``AudioSpec``), a clip's key made and its noise
made. At most 8 files; on each stack no file is left and come back to (no back-and-forth);
one 4-option question's noise key made once."""

from __future__ import annotations

import inspect
from pathlib import Path

from lm_eval.api.instance import Instance

import lm_eval_rul
from lm_eval_rul.audio.conditions import registry
from lm_eval_rul.audio.conditions.basic import Noise
from lm_eval_rul.audio.conditions.spec import AudioSpec

PACKAGE = Path(lm_eval_rul.__file__).resolve().parent


def _walk(callee: str) -> list[str]:
    """The package files on the caller's stack, outermost first, then ``callee``'s file,
    repeats in a row folded."""
    files: list[str] = []
    for path in [*(Path(f.filename).resolve() for f in reversed(inspect.stack()[2:])), callee]:
        path = Path(path).resolve()
        if path.is_relative_to(PACKAGE):
            name = path.relative_to(PACKAGE).as_posix()
            if not files or files[-1] != name:
                files.append(name)
    return files


def test_audio_noise_walks_at_most_8_files_one_way(tiny_audio_lm, audio_data, monkeypatch):
    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text, load_rul_muchomusic
    from lm_eval_rul.models.lalm import LALM

    stacks: list[list[str]] = []
    keys: list[str] = []

    def recorded(original, note=None):
        def wrapper(*args, **kwargs):
            stacks.append(_walk(inspect.getsourcefile(original)))
            if note is not None:
                note(args)
            return original(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(registry, "condition_named", recorded(registry.condition_named))
    for module in ("lm_eval_rul.models.args", "lm_eval_rul.models.core"):
        monkeypatch.setattr(f"{module}.condition_named", registry.condition_named)
    monkeypatch.setattr(AudioSpec, "__init__", recorded(AudioSpec.__init__))
    monkeypatch.setattr(Noise, "key", recorded(Noise.key, lambda a: keys.append(a[1]["id"])))
    monkeypatch.setattr(Noise, "waveform", recorded(Noise.waveform))

    lm = LALM(pretrained=str(tiny_audio_lm), audio="noise", noise_seconds=1.0,
              results_cache="none")  # fmt: skip
    doc = load_rul_muchomusic(0, **audio_data)["test"][0]
    task = ("rul_muchomusic_fold0", 0, 1)
    requests = [
        Instance("loglikelihood", doc, (doc_to_text(doc), f" {c}"), i, task)
        for i, c in enumerate(doc_to_choice(doc))
    ]
    assert len(requests) == 4
    scores = lm.loglikelihood(requests, True)
    assert len(scores) == 4 and all(score[0] < 0 for score in scores)

    assert keys == [doc["id"]]  # one question, four letters: its noise key made once
    walked = {name for stack in stacks for name in stack}
    print(f"audio=noise walks {len(walked)} files: {sorted(walked)}")
    for stack in {tuple(s) for s in stacks}:
        print(" -> ".join(stack))
        assert len(set(stack)) == len(stack), f"back-and-forth on the stack {stack}"
    assert len(walked) <= 8, sorted(walked)
    assert {"models/lalm.py", "audio/conditions/basic.py"} <= walked
