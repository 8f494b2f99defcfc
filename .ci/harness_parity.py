"""Same fixture, two lm-eval releases, the same numbers: CI's cross-version check.

Builds one small offline fixture (a tiny text LM, a tiny Qwen2-Audio LM, 8 RUL questions
with their clips), then runs with EACH environment's python, as ``python -m lm_eval_rul``:

- ``hf``: the README's main job (``rul_muchomusic``) and a generation task
  (``rul_muchomusic_gen``), in one run;
- ``lalm``: ``rul_muchomusic`` letters under ``audio=original`` and ``audio=noise``;
- ``report`` over those three runs.

and compares every metric of every task and group of the results JSONs (lm-eval 0.5's
``group::task`` names read as ``task``) and every number of ``report.json``, within
``--tolerance``. Prints the compared figures; exits 1 listing the differing keys.

    python .ci/harness_parity.py --env 0.4.13=.venv/bin/python \
        --env 0.5.0.dev1=.venv-lm05/bin/python

``--second-seed`` gives the second environment's ``lalm`` runs another seed: a self-check
that the comparison can fail (it must, as the noise differs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the builders and plain_results of this checkout

OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
LIMIT = "4"  # documents per fold of the lalm runs: enough to differ, quick on 2 cores
SEED = 1234
#: Display labels, not figures: 0.5 adds ``name`` (``group::task``) beside 0.4.13's ``alias``.
LABELS = ("alias", "name")
RUNS = ("hf", "original", "noise")


def build_fixture(root: Path) -> dict[str, Any]:
    """The tiny models and data files, built once and read by both environments."""
    from lm_eval_rul.testing.audio import make_tiny_audio_lm, write_audio_benchmark
    from lm_eval_rul.testing.text import make_tiny_causal_lm

    return {
        "text_lm": make_tiny_causal_lm(root / "text_lm", family="qwen2"),
        "audio_lm": make_tiny_audio_lm(root / "audio_lm", "qwen2_audio"),
        "metadata": write_audio_benchmark(root / "data"),
    }


def run_commands(fixture: dict[str, Any], out: Path, seed: int) -> list[tuple[str, list[str]]]:
    """``(name, lm-eval-rul arguments)`` of the runs and the report, in order."""
    common = ["--metadata", json.dumps(fixture["metadata"]), "--device", "cpu",
              "--log_samples", "--batch_size", "4"]  # fmt: skip
    lalm = f"pretrained={fixture['audio_lm']},dtype=float32,noise_seconds=1,seed={seed}"
    runs = [
        ("hf", ["--model", "hf", "--model_args", f"pretrained={fixture['text_lm']},dtype=float32",
                "--tasks", "rul_muchomusic,rul_muchomusic_gen", "--gen_kwargs",
                "max_gen_toks=8"]),
        ("original", ["--model", "lalm", "--model_args", f"{lalm},audio=original",
                      "--tasks", "rul_muchomusic", "--limit", LIMIT]),
        ("noise", ["--model", "lalm", "--model_args", f"{lalm},audio=noise",
                   "--tasks", "rul_muchomusic", "--limit", LIMIT]),
    ]  # fmt: skip
    commands = [(n, ["run", *a, *common, "--output_path", str(out / n)]) for n, a in runs]
    report = ["report", *(str(out / n) for n, _ in runs), "--out", str(out / "report"),
              "--n-resamples", "200", "--seed", "0"]  # fmt: skip
    return [*commands, ("report", report)]


def run_env(python: str, fixture: dict[str, Any], out: Path, seed: int) -> float:
    """Every command in one environment; its own lalm cache, so nothing is shared."""
    env = {**os.environ, **OFFLINE, "PYTHONPATH": str(REPO),
           "LM_EVAL_RUL_CACHE": str(out / "lalm_cache")}  # fmt: skip
    started = time.monotonic()
    for name, args in run_commands(fixture, out, seed):
        done = subprocess.run([python, "-m", "lm_eval_rul", *args], capture_output=True,
                              text=True, env=env, timeout=900)  # fmt: skip
        if done.returncode:
            raise RuntimeError(f"{python} {name} failed ({done.returncode}):\n"
                               f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")  # fmt: skip
    return time.monotonic() - started


def metrics(run_dir: Path) -> dict[str, Any]:
    """``task/metric -> value`` of a run's results JSON (tasks and groups, plain names)."""
    from lm_eval_rul.harness_compat import plain_results

    (path,) = sorted(run_dir.rglob("results_*.json"))
    results, _ = plain_results(json.loads(path.read_text()))
    figures = {}
    for section in ("results", "groups"):
        for task, values in (results.get(section) or {}).items():
            for metric, value in values.items():
                if metric not in LABELS:
                    figures[f"{section}/{task}/{metric}"] = value
    for task, count in (results.get("n-samples") or {}).items():
        figures[f"n-samples/{task}"] = count
    return figures


def numbers(value: Any, prefix: str = "") -> dict[str, Any]:
    """Every number (and None, an undefined statistic) of a JSON tree, by its key path."""
    if isinstance(value, dict):
        return {
            k: v for key, item in value.items() for k, v in numbers(item, f"{prefix}/{key}").items()
        }
    if isinstance(value, list):
        return {
            k: v for i, item in enumerate(value) for k, v in numbers(item, f"{prefix}[{i}]").items()
        }
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return {prefix: value}
    return {}


def responses(run_dir: Path) -> dict[str, Any]:
    """``task/question id/request -> response`` of a run's sample logs (plain task names):
    each choice's log-likelihood and greediness, each generation's text."""
    from lm_eval_rul.harness_compat import plain_task_name, sample_responses

    figures = {}
    for path in run_dir.rglob("samples_*.jsonl"):
        task = plain_task_name(path.name[len("samples_") :].rsplit("_", 1)[0])
        for line in path.read_text().splitlines():
            sample = json.loads(line)
            for i, response in enumerate(sample_responses(sample)):
                key = f"{task}/{sample['doc']['id']}/{i}"
                if isinstance(response, list):  # [loglik, is_greedy]
                    figures[f"{key}/loglik"], figures[f"{key}/greedy"] = response
                else:
                    figures[key] = response
    return figures


def figures_of(out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """What is compared of one environment: the runs' metrics and report.json's numbers
    (printed), and the logged responses (counted)."""
    figures = {f"{n}:{k}": v for n in RUNS for k, v in metrics(out / n).items()}
    report = json.loads((out / "report" / "report.json").read_text())
    figures.update({f"report.json:{k}": v for k, v in numbers(report).items()})
    logged = {f"{n}:samples/{k}": v for n in RUNS for k, v in responses(out / n).items()}
    return figures, logged


def same(a: Any, b: Any, tolerance: float) -> bool:
    """Numbers within ``tolerance`` (NaN equals NaN); anything else exactly equal."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= tolerance
    return a == b  # strings ("N/A" standard errors), None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env", action="append", required=True, metavar="NAME=PYTHON",
                        help="an environment's python (exactly two)")  # fmt: skip
    parser.add_argument("--tolerance", type=float, default=1e-9)
    parser.add_argument("--second-seed", type=int, default=SEED,
                        help="seed of the second environment's lalm runs (self-check)")  # fmt: skip
    parser.add_argument("--keep", type=Path, help="work in this (new or empty) folder and keep it")
    args = parser.parse_args(argv)
    envs = [tuple(e.split("=", 1)) for e in args.env]
    if len(envs) != 2 or any(len(e) != 2 for e in envs):
        parser.error("give exactly two --env NAME=PYTHON")
    for name, python in envs:
        if not os.access(python, os.X_OK):
            parser.error(f"--env {name}={python}: not an executable python")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="harness_parity_") as tmp:
        root = args.keep or Path(tmp)
        fixture = build_fixture(root / "fixture")
        seeds = [SEED, args.second_seed]
        with ThreadPoolExecutor(2) as pool:  # one environment per core
            times = list(pool.map(lambda i: run_env(envs[i][1], fixture, root / envs[i][0],
                                                    seeds[i]), range(2)))  # fmt: skip
        (a, logged_a), (b, logged_b) = (figures_of(root / name) for name, _ in envs)
    (name_a, _), (name_b, _) = envs
    differing = print_table(a, b, name_a, name_b, args.tolerance)
    logged = differing_keys(logged_a, logged_b, args.tolerance)
    for key in logged[:20]:  # the table leaves the responses out: too many to read
        print(f"{key}  {logged_a.get(key, '-')!s}  {logged_b.get(key, '-')!s}  DIFFERS")
    differing += logged
    print(
        f"{len(a.keys() | b.keys())} figures and {len(logged_a.keys() | logged_b.keys())} "
        f"logged responses compared (tolerance {args.tolerance:g}); the runs took "
        f"{times[0]:.0f}s ({name_a}) and {times[1]:.0f}s ({name_b}) side by side, "
        f"{time.monotonic() - started:.0f}s in all"
    )
    if differing:
        print(
            f"harness parity FAILED: {len(differing)} figures differ between {name_a} and "
            f"{name_b}: {', '.join(differing)}",
            file=sys.stderr,
        )
        return 1
    print(f"harness parity: {name_a} and {name_b} give the same numbers")
    return 0


def differing_keys(a: dict[str, Any], b: dict[str, Any], tolerance: float) -> list[str]:
    """Keys missing on one side or whose values differ, sorted."""
    keys = sorted(a.keys() | b.keys())
    return [k for k in keys if k not in a or k not in b or not same(a[k], b[k], tolerance)]


def print_table(a: dict[str, Any], b: dict[str, Any], name_a: str, name_b: str, tolerance: float):
    """Print every figure of both sides, marking the differing ones; return those."""
    differing = differing_keys(a, b, tolerance)
    keys = sorted(a.keys() | b.keys())
    width = max(map(len, keys))
    print(f"{'figure':<{width}}  {name_a:>22}  {name_b:>22}")
    for key in keys:
        mark = "  DIFFERS" if key in differing else ""
        print(f"{key:<{width}}  {a.get(key, '-')!s:>22}  {b.get(key, '-')!s:>22}{mark}")
    return differing


if __name__ == "__main__":
    sys.exit(main())
