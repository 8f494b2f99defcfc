"""Two checkouts, the same letters, generations and resume-cache rows: a refactor's check.

Builds one offline fixture (a tiny random-weight Qwen2-Audio LM and its processor, 8 RUL
questions with their clips), then, for EACH checkout, as a separate process with that
checkout first on ``sys.path``:

- ``lalm-api`` against the OpenAI-compatible test server (``tests/doubles``, from this
  checkout), on the prompt path, the top path and generation, under ``audio=original``
  and ``audio=noise``, writing a resume cache;
- ``lalm`` (transformers) letters and generations under both conditions.

Then the second checkout runs again on the FIRST one's cache: it must send nothing and
return the same answers. Compares every value exactly, and the two caches row by row
(scope, key, value). Exits 1 naming what differs.

    python .ci/engine_parity.py --old /tmp/old-checkout --new .
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OFFLINE = {
    "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}  # fmt: skip


def _child(repo: str, work: Path, cache: Path, out: Path) -> None:
    sys.path[:0] = [repo, str(REPO / "tests")]
    from doubles.openai_server import OpenAIAudioServer
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text, load_rul_muchomusic
    from lm_eval_rul.models.api import LALMAPI
    from lm_eval_rul.models.lalm import LALM

    data, model = json.loads((work / "data.json").read_text()), work / "model"
    scored, asked = [], []
    for fold in (0, 1):
        for doc in load_rul_muchomusic(fold, **data)["test"]:
            task, context = (f"rul_muchomusic_fold{fold}", 0, 1), doc_to_text(doc)
            scored += [
                Instance("loglikelihood", doc, (context, f" {c}"), i, task)
                for i, c in enumerate(doc_to_choice(doc))
            ]
            until = {"until": ["\n"], "max_gen_toks": 8}
            asked.append(Instance("generate_until", doc, (context, until), 0, task))
    results: dict[str, object] = {}
    with OpenAIAudioServer(model, served_model="tiny") as server:
        base = {"base_url": server.url, "model": "tiny", "retry_backoff": 0}
        for audio in ("original", "noise"):
            for path in ("prompt", "top"):
                api = LALMAPI(
                    **base, results_cache=str(cache), logprobs=path, audio=audio,
                    noise_seconds=1.0,
                )  # fmt: skip
                results[f"lalm-api {path} {audio}"] = api.loglikelihood(scored, True)
            results[f"lalm-api generation {audio}"] = api.generate_until(asked, True)
        results["lalm-api HTTP requests"] = server.posts
    for audio in ("original", "noise"):
        lm = LALM(pretrained=str(model), audio=audio, noise_seconds=1.0, results_cache="none")
        results[f"lalm letters {audio}"] = lm.loglikelihood(scored, True)
        results[f"lalm generation {audio}"] = lm.generate_until(asked, True)
    out.write_text(json.dumps(results))


def _run(repo: str, work: Path, cache: Path, name: str) -> dict:
    out = work / f"{name}.json"
    command = [sys.executable, __file__, "--child", repo, str(work), str(cache), str(out)]
    subprocess.run(command, check=True, env={**os.environ, **OFFLINE}, cwd=work)
    return json.loads(out.read_text())


def _rows(path: Path) -> set:
    with sqlite3.connect(str(path)) as db:
        return set(db.execute("SELECT scope, key, value FROM results"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="the checkout before the change (required)")
    parser.add_argument("--new", default=str(REPO), help="the checkout after it")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        repo, work, cache, out = args.child
        _child(repo, Path(work), Path(cache), Path(out))
        return 0
    if not args.old:
        parser.error("--old CHECKOUT is required (e.g. a git worktree of the earlier commit)")
    os.environ.update(OFFLINE)
    sys.path.insert(0, str(REPO))
    from lm_eval_rul.testing.audio import make_tiny_audio_lm, write_audio_benchmark

    work = Path(tempfile.mkdtemp(prefix="engine_parity_"))
    make_tiny_audio_lm(work / "model", "qwen2_audio")
    (work / "data.json").write_text(json.dumps(write_audio_benchmark(work / "data")))
    old = _run(args.old, work, work / "old.sqlite", "old")
    new = _run(args.new, work, work / "new.sqlite", "new")
    resumed = _run(args.new, work, work / "old.sqlite", "resumed")
    differ = [key for key in old if old[key] != new[key]]
    differ += [
        f"{key} (read back from the old cache)"
        for key in old
        if key != "lalm-api HTTP requests" and old[key] != resumed[key]
    ]
    if resumed["lalm-api HTTP requests"]:
        differ.append(f"resumed run sent {resumed['lalm-api HTTP requests']} requests")
    rows_old, rows_new = _rows(work / "old.sqlite"), _rows(work / "new.sqlite")
    if rows_old != rows_new:
        differ.append(f"cache rows: {len(rows_old ^ rows_new)} differ")
    for key, value in old.items():
        shown = value if isinstance(value, int) else f"{len(value)} values"
        print(f"{key}: {shown}, {'equal' if old[key] == new[key] else 'DIFFERENT'}")
    print(f"resumed on the old cache: {resumed['lalm-api HTTP requests']} HTTP requests")
    print(f"cache rows: {len(rows_old)} old, {len(rows_new)} new, equal: {rows_old == rows_new}")
    if differ:
        print("DIFFERENT: " + "; ".join(differ))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
