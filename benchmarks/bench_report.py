"""``lm-eval-rul report`` over full-size tagging runs: seconds per section, and the old
per-resample scikit-learn bootstrap against the array one.

1. A real run: the tiny Qwen2-Audio model (``lalm``, ``audio=original``) runs the
   ``music_understanding`` tasks (RUL-MuChoMusic's four folds, ``gtzan_gen``, the four
   ``mtg_*_gen``, ``magnatagatune_gen``) and, with ``--likelihood``, the tag-likelihood
   tasks (``gtzan`` letters, ``mtg_*``, ``magnatagatune``) on the fixtures, ``--limit 2``,
   ``--log_samples``. Its output folder is the template.
2. Growing it: per condition (original, noise, silence, none) a results JSON and one
   ``samples_<task>_<time>.jsonl`` per task written as the harness writes them (the
   template's keys, ``doc_hash`` / ``prompt_hash`` / ``target_hash`` by lm-eval's
   ``hash_string``, the metric values by the tasks' own ``process_results``), at the
   real splits' sizes: GTZAN 290 test clips (10 genres), MTG-Jamendo split-0 test genre
   11,479 clips × 87 tags, mood/theme 4,231 × 56, instrument 5,115 × 40, top-50 11,356 ×
   50, MagnaTagATune 5,329 × 50, RUL-MuChoMusic 1,187 questions × 4 folds (``--clips N``
   sets every tagging task to N clips instead). Synthetic answers: tags drawn with a
   Zipf popularity (the splits' mean tags per clip), a tag's yes − no score is
   ``signal × gold + N(0, 1)`` rounded to 3 decimals (ties happen), free-text replies
   name the tags scored above 1 (at most 5; 10% of replies name none), the signal falling from
   original to none.
3. ``report`` on the four runs, timed per section: reading the runs, the
   multiple-choice benchmark (RUL-MuChoMusic: table, gains, PI), each tagging task's
   rows, gains (bootstrap) and per-tag figure data, the understanding table, the
   figures and files.
4. The old implementation (a scikit-learn ``roc_auc_score`` / ``average_precision_score``
   call per tag and resample, the loop of 6792c0b) and
   the arrays on the same full-size runs: every run's figures, and every gain with
   ``--old-resamples`` resamples on both sides (the old loop would take hours at 1,000:
   its cost is resamples × tags × one call; both are linear in resamples, so the table
   scales it to 1,000); estimates and intervals must agree to 1e-9 (exit status 1 if not).

Measured (CPU seconds of this process; 2 CPU cores shared with other jobs, load about 9;
1,000 resamples for the tagging gains, 9,999 for the multiple-choice table, as ``report``
defaults). The ``music_understanding`` table at the splits' sizes: ``report`` 13.2 CPU s
(35.8 s wall): reading the runs 7.4, RUL-MuChoMusic 0.8, the tagging rows 0.25, the 18
gains 4.3, figures and files 1.3; the old loop's gains ≈ 504 CPU s (x116). With the
likelihood tasks, every tagging task grown to 3,000 clips (``--likelihood --clips 3000
--old-resamples 5``): 44.8 CPU s (107 s wall): reading 2.0 GB of samples 16.2, the 36
gains 26.1 (old ≈ 7,352, x282), rows 1.2 (old 5.4). Intervals equal to 3e-16. The tables:
docs/report.md, "Music tagging".

Usage:
    python benchmarks/bench_report.py                        # the music_understanding table
    python benchmarks/bench_report.py --likelihood --clips 3000
    python benchmarks/bench_report.py --keep /tmp/runs       # then --reuse: report only
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from lm_eval_rul.report.tagging.sections import MAX_RESAMPLES

#: Real test-split sizes: task -> (clips, tags).
SIZES: dict[str, tuple[int, int]] = {
    "gtzan": (290, 10),
    "mtg_genre": (11_479, 87),
    "mtg_moodtheme": (4_231, 56),
    "mtg_instrument": (5_115, 40),
    "mtg_top50": (11_356, 50),
    "magnatagatune": (5_329, 50),
}
#: Mean gold tags per clip of each split (MTG-Jamendo split-0 test, MagnaTagATune top-50).
MEAN_TAGS = {"gtzan": 1.0, "mtg_genre": 2.41, "mtg_moodtheme": 1.79, "mtg_instrument": 2.44,
             "mtg_top50": 3.07, "magnatagatune": 2.7}  # fmt: skip
RUL_QUESTIONS = 1_187
CONDITIONS = {"original": 1.5, "noise": 0.4, "silence": 0.2, "none": 0.0}
UNDERSTANDING = ["rul_muchomusic", "gtzan_gen", "mtg_genre_gen", "mtg_moodtheme_gen",
                 "mtg_instrument_gen", "mtg_top50_gen", "magnatagatune_gen"]  # fmt: skip
LIKELIHOOD = ["gtzan", "mtg_genre", "mtg_moodtheme", "mtg_instrument", "mtg_top50",
              "magnatagatune"]  # fmt: skip
_SYLLABLES = ["ka", "lo", "mi", "ru", "te", "sa", "no", "vi", "de", "po", "gu", "fe"]


def template_run(root: Path, likelihood: bool) -> Path:
    """A real ``lalm`` run on the fixtures (``--limit 2``): the rows' template (one made
    before under ``root`` with the same tasks is reused)."""
    from lm_eval_rul.testing.harness import run_cli
    from lm_eval_rul.testing.smoke import write_smoke_models
    from lm_eval_rul.testing.tagging import write_gtzan, write_mtg, write_mtt

    tasks = UNDERSTANDING + (LIKELIHOOD if likelihood else [])
    out = root / "template"
    made = sorted(out.rglob("results_*.json"))
    if made and set(tasks) <= set(json.loads(made[0].read_text())["results"]):
        return made[0]
    if root.exists():
        shutil.rmtree(root)
    written = write_smoke_models(root / "smoke")
    metadata = json.loads(written["metadata"].read_text())
    gtzan, mtg = write_gtzan(root / "gtzan", per_genre=1), write_mtg(root / "mtg")
    mtt = write_mtt(root / "mtt")
    metadata.update({
        "gtzan_split_file": str(gtzan["split"]), "gtzan_audio_dir": str(gtzan["audio"]),
        "mtg_data_dir": str(mtg["data"]), "mtg_audio_dir": str(mtg["audio"]),
        "mtt_annotations": str(mtt["annotations"]), "mtt_split_file": str(mtt["split"]),
        "mtt_audio_dir": str(mtt["audio"]), "tagging_seconds": 1.5,
    })  # fmt: skip
    run_cli(["run", "--model", "lalm", "--model_args",
             f"pretrained={written['audio_model']},audio=original,results_cache=none",
             "--tasks", ",".join(tasks), "--device", "cpu", "--batch_size", "16", "--limit", "2",
             "--gen_kwargs", "max_gen_toks=4", "--log_samples", "--output_path", str(out),
             "--metadata", json.dumps(metadata)])  # fmt: skip
    return next(out.rglob("results_*.json"))


def _vocabulary(task: str, template_tags: list[str], n_tags: int) -> list[str]:
    """The template's vocabulary (GTZAN, MagnaTagATune: the real one) or, for MTG-Jamendo,
    invented ``category---word`` tags up to the real count."""
    if len(template_tags) >= n_tags:
        return template_tags[:n_tags]
    categories = sorted({t.split("---")[0] for t in template_tags})
    words = [a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES]
    return [f"{categories[i % len(categories)]}---{words[i * 7]}" for i in range(n_tags)]


def _gold(rng: np.random.Generator, task: str, n: int, tags: list[str]) -> list[list[str]]:
    popularity = 1.0 / np.arange(1, len(tags) + 1) ** 0.8
    popularity /= popularity.sum()
    if task == "gtzan":
        return [[tags[i]] for i in rng.integers(0, len(tags), n)]
    counts = np.maximum(1, rng.poisson(MEAN_TAGS[task] - 1, n) + 1)
    return [list(rng.choice(tags, size=min(int(k), len(tags)), replace=False, p=popularity))
            for k in counts]  # fmt: skip


def _hashed(row: dict[str, Any]) -> dict[str, Any]:
    from lm_eval.utils import handle_non_serializable, hash_string

    doc_text = json.dumps(row["doc"], indent=2, default=handle_non_serializable,
                          ensure_ascii=False)  # fmt: skip
    first = next(iter(row["arguments"].values()))["arg_0"]
    row["doc_hash"], row["prompt_hash"] = hash_string(doc_text), hash_string(first)
    row["target_hash"] = hash_string(str(row["target"]))
    return row


def _row(template: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A logged sample with the template's keys, in its order."""
    row = {key: fields.get(key, template[key]) for key in template}
    row.update({k: v for k, v in fields.items() if k not in row})
    return _hashed(row)


def _doc(template: dict[str, Any], clip_id: str, **fields: Any) -> dict[str, Any]:
    doc = copy.deepcopy(template)
    old = str(doc["id"])
    for key in ("audio_path", "audio_ref", "audio_track", "audio_heard", "track"):
        if isinstance(doc.get(key), str):
            doc[key] = doc[key].replace(old, clip_id)
    doc["audio_tried"] = [str(t).replace(old, clip_id) for t in doc.get("audio_tried") or ()]
    doc.update(id=clip_id, **fields)
    return doc


def _loglik_responses(values: list[float]) -> tuple[list, list, list]:
    """(resps, filtered_resps, results) of loglikelihood requests, as lm-eval logs them."""
    pairs = [(float(v), False) for v in values]
    logged = [[str(v), str(g)] for v, g in pairs]
    return [[one] for one in logged], logged, pairs


def grow_tagging(template: dict, task: str, n: int, n_tags: int, signal: float, seed: int):
    """``n`` logged samples of tagging task ``task`` (any form) from its template row."""
    from lm_eval_rul.mcqa.tasks import process_results as process_results_letters
    from lm_eval_rul.tagging.prompts import TAG_SLOT, gen_prompt, letters_prompt
    from lm_eval_rul.tagging.tasks import (
        process_results_gen,
        process_results_genre,
        process_results_likelihood,
    )
    from lm_eval_rul.tagging.vocab import tag_text

    base = template["doc"]
    tagging_task = base["tagging_task"]
    tags = _vocabulary(tagging_task, list(base["tags"]), n_tags)
    texts = [tag_text(t) for t in tags]
    golds = _gold(np.random.default_rng([seed, 0]), tagging_task, n, tags)
    rng = np.random.default_rng([seed, int(signal * 1000) + 1])
    column = {t: j for j, t in enumerate(tags)}
    likelihood = "roc_auc" in template
    letters = "letters" in base
    shared: dict[str, Any] = {"tags": tags}
    if likelihood:
        shared["tag_texts"] = texts
    elif letters:
        prompt, shown = letters_prompt(tags)
        shared.update(prompt=prompt, options=texts, letters=list(shown))
    else:
        shared["prompt"] = gen_prompt(tagging_task, tags, base.get("tagging_protocol", "ours"))
    gen_args = next(iter(template["arguments"].values()))["arg_1"]
    rows = []
    for i, gold in enumerate(golds):
        truth = np.zeros(len(tags))
        truth[[column[t] for t in gold]] = 1.0
        score = np.round(signal * truth + rng.normal(size=len(tags)), 3)
        doc = _doc(base, f"{tagging_task}_{i:06d}", gold_tags=gold,
                   gold_text=", ".join(tag_text(g) for g in gold), **shared)  # fmt: skip
        if likelihood:
            no = np.round(-rng.uniform(0.5, 4.0, len(tags)), 3)
            values = [v for pair in zip(no + score, no, strict=True) for v in pair]
            resps, filtered, results = _loglik_responses(values)
            arguments = {
                f"gen_args_{k}": {"arg_0": base["prompt"].replace(TAG_SLOT, texts[k // 2]),
                                  "arg_1": " yes" if k % 2 == 0 else " no"}
                for k in range(2 * len(tags))
            }  # fmt: skip
            metrics = process_results_likelihood(doc, results)
            target = template["target"]
        elif letters:
            gold_index = column[gold[0]]
            doc.update(gold=gold_index)
            resps, filtered, results = _loglik_responses(list(np.round(score - 6.0, 4)))
            arguments = {f"gen_args_{k}": {"arg_0": doc["prompt"], "arg_1": f" {letter}"}
                         for k, letter in enumerate(doc["letters"])}  # fmt: skip
            metrics = process_results_letters(doc, results)
            target = str(gold_index)
        else:
            if rng.random() < 0.1:
                reply = "I cannot tell without hearing more of it."
            elif tagging_task == "gtzan":
                reply = f"{texts[int(np.argmax(score))].capitalize()}."
            else:
                named = [texts[j] for j in np.argsort(-score)[:5] if score[j] > 1.0]
                reply = ", ".join(named) if named else "None of these."
            resps, filtered = [[reply]], [reply]
            arguments = {"gen_args_0": {"arg_0": doc["prompt"], "arg_1": gen_args}}
            process = process_results_genre if tagging_task == "gtzan" else process_results_gen
            metrics = process(doc, [reply])
            target = doc["gold_text"]
        rows.append(_row(template, doc_id=i, doc=doc, target=target, arguments=arguments,
                         resps=resps, filtered_resps=filtered, **metrics))  # fmt: skip
    return rows


def grow_folds(templates: dict[str, dict], n: int, signal: float, seed: int) -> dict[str, list]:
    """RUL-MuChoMusic's fold tasks, ``n`` questions each (the same ids in every fold)."""
    from lm_eval_rul.mcqa.tasks import process_results

    rng = np.random.default_rng([seed, int(signal * 1000) + 7])
    out = {}
    for task, template in templates.items():
        rows = []
        for q in range(n):
            doc = _doc(template["doc"], f"{q}", source_pi=float(np.round(rng.random(), 4)),
                       track=f"yt{q:08d}_30")  # fmt: skip
            truth = np.eye(len(doc["options"]))[int(doc["gold"])]
            values = list(np.round(signal * truth + rng.normal(size=len(truth)) - 6.0, 4))
            resps, filtered, results = _loglik_responses(values)
            rows.append(_row(template, doc_id=q, doc=doc, resps=resps, filtered_resps=filtered,
                             **process_results(doc, results)))  # fmt: skip
        out[task] = rows
    return out


def _figures(task: str, rows: list[dict]) -> dict[str, Any]:
    from lm_eval_rul.tagging.records import gen_figures, likelihood_figures

    first = rows[0]
    if "roc_auc" in first:
        figures = likelihood_figures([r["roc_auc"] for r in rows])
    elif "micro_f1" in first:
        figures = gen_figures([r["micro_f1"] for r in rows])
    else:
        figures = {k: float(np.mean([r[k] for r in rows]))
                   for k in ("acc", "perceptual_index", "parse_failure") if k in first}  # fmt: skip
    out = {}
    for name, value in figures.items():
        out[f"{name},none"] = value
        values = [r[name] for r in rows] if not isinstance(first[name], dict) else None
        out[f"{name}_stderr,none"] = (float(np.std(values, ddof=1) / math.sqrt(len(values)))
                                      if values and len(values) > 1 else "N/A")  # fmt: skip
    return out


def grow_run(template_file: Path, out: Path, condition: str, signal: float, clips: int | None,
             seed: int, stamp: str) -> Path:
    """One condition's run folder grown from the template run (see the module doc)."""
    from lm_eval_rul.report.samples import majority_from_samples

    results = json.loads(template_file.read_text())
    stamp_old = template_file.stem[len("results_"):]
    folder = out / condition / template_file.parent.name
    folder.mkdir(parents=True)
    samples: dict[str, list] = {}
    folds = {}
    for task in results["results"]:
        path = template_file.parent / f"samples_{task}_{stamp_old}.jsonl"
        if not path.is_file():
            continue
        first = json.loads(path.read_text().splitlines()[0])
        if task.startswith("rul_muchomusic_fold"):
            folds[task] = first
            continue
        tagging_task = first["doc"]["tagging_task"]
        n, n_tags = SIZES[tagging_task]
        samples[task] = grow_tagging(first, task, clips or n, n_tags, signal,
                                     seed=sum(map(ord, tagging_task)))  # fmt: skip
    samples.update(grow_folds(folds, RUL_QUESTIONS, signal, seed))
    for task, rows in samples.items():
        with (folder / f"samples_{task}_{stamp}.jsonl").open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        results["results"][task].update(_figures(task, rows), sample_len=len(rows))
        results["n-samples"][task] = {"original": len(rows), "effective": len(rows)}
    group = {"acc,none": float(np.mean([r["acc"] for t in folds for r in samples[t]])),
             "perceptual_index,none": float(np.mean([r["perceptual_index"]
                                                     for t in folds for r in samples[t]])),
             "sample_len": sum(len(samples[t]) for t in folds)}  # fmt: skip
    votes = majority_from_samples([samples[t] for t in sorted(folds)])
    group.update({"majority_acc,none": votes["majority_acc"],
                  "plurality_acc_release,none": votes["plurality_acc_release"]})  # fmt: skip
    for where in ("results", "groups"):
        if "rul_muchomusic" in results.get(where, {}):
            results[where]["rul_muchomusic"].update(group)
    config = results["config"]
    config["model_args"]["audio"] = condition
    config.update(audio_condition=condition, limit=None)
    config["audio_condition_by_task"] = dict.fromkeys(config["audio_condition_by_task"], condition)
    target = folder / f"results_{stamp}.json"
    target.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    return out / condition


class Sections:
    """Seconds per report section: wraps the functions ``build_report`` calls; a section
    called inside another (a gain's point estimate) counts to the outer one."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)  # this process's CPU seconds
        self._depth = 0

    @contextmanager
    def timed(self, name: str, outer: bool = False):
        if self._depth and not outer:
            yield
            return
        start, cpu = time.perf_counter(), time.process_time()
        self._depth += 0 if outer else 1
        try:
            yield
        finally:
            self._depth -= 0 if outer else 1
            self.seconds[name] += time.perf_counter() - start
            self.cpu[name] += time.process_time() - cpu

    def wrap(self, module: Any, attribute: str, name: Any) -> None:
        function = getattr(module, attribute)

        def timed(*args, **kwargs):
            label = name(*args) if callable(name) else name
            with self.timed(label):
                return function(*args, **kwargs)

        setattr(module, attribute, timed)


def _task_of(clips, *_rest) -> str:
    """The harness task of tagging clips (their record names the tagging task only)."""
    suffix = "_gen" if clips[0]["form"] in ("gen", "genre") else ""
    return f"{clips[0]['task']}{suffix}"


def timed_report(run_dirs: list[Path], out: Path, sections: Sections) -> dict[str, Any]:
    """``lm-eval-rul report RUN_DIRS --out OUT`` in process, its sections timed."""
    from lm_eval_rul.report import build_report, load_runs, summary, write_report, writing
    from lm_eval_rul.report.tagging import sections as tagging

    def members_task(members, *_rest):
        run, clips = members[0]
        return f"tagging {_task_of(clips)}: per-tag figure data"

    sections.wrap(summary, "_table_row", "multiple choice: table rows")
    sections.wrap(summary, "paired_comparisons", "multiple choice: gains, leakage")
    sections.wrap(summary, "pi_correlations", "multiple choice: PI correlations")
    sections.wrap(summary, "factual_report", "factual")
    sections.wrap(summary, "pi_distributions", "PI distributions")
    sections.wrap(tagging, "figures_of", lambda clips, *r: f"tagging {_task_of(clips)}: rows")
    sections.wrap(tagging, "_gain", lambda a, *r: f"tagging {_task_of(a)}: gains (bootstrap)")
    sections.wrap(tagging, "_baseline", lambda c, *r: f"tagging {_task_of(c)}: baseline")
    sections.wrap(tagging, "_per_tag", members_task)
    sections.wrap(tagging, "_understanding", "tagging: understanding table")
    sections.wrap(writing, "draw_figures", "figures")
    with sections.timed("read runs"):
        runs = load_runs(run_dirs)
    with sections.timed("build_report (all numbers)", outer=True):
        report = build_report(runs)
    with sections.timed("write_report (figures, json, md)", outer=True):
        write_report(report, out)
    return report


def old_macro_auc(tags, scores, gold):
    """The per-tag scikit-learn loop the package used before (6792c0b), the reference."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    from lm_eval_rul.tagging.metrics import AucScores

    matrix = np.asarray(scores, dtype=float).reshape(len(gold), len(tags))
    truth = np.array([[tag in set(g) for tag in tags] for g in gold], dtype=int)
    per_tag, skipped = {}, []
    for j, tag in enumerate(tags):
        column = truth[:, j]
        if column.min() == column.max():
            skipped.append(tag)
            continue
        per_tag[tag] = (float(roc_auc_score(column, matrix[:, j])),
                        float(average_precision_score(column, matrix[:, j])))  # fmt: skip
    if not per_tag:
        return AucScores(float("nan"), float("nan"), {}, tuple(skipped))
    values = np.array(list(per_tag.values()))
    return AucScores(float(values[:, 0].mean()), float(values[:, 1].mean()), per_tag,
                     tuple(skipped))  # fmt: skip


def old_figures_of(clips) -> dict[str, float]:
    from lm_eval_rul.tagging.metrics import set_scores
    from lm_eval_rul.tagging.records import gen_figures, score_matrix

    form = clips[0]["form"]
    if form == "likelihood":
        tags, matrix, gold = score_matrix(clips)
        auc = old_macro_auc(tags, matrix, gold)
        sets = set_scores([c["predicted"] for c in clips], gold)
        return {"roc_auc": auc.roc_auc, "pr_auc": auc.pr_auc, "micro_f1": sets.micro_f1}
    if form == "gen":
        return gen_figures(clips)
    return {"acc": float(np.mean([c["acc"] for c in clips]))}


def old_gain(a, b, settings, key) -> dict[str, Any] | None:
    """The gain's bootstrap as it was: every resample's figures recomputed by the loop."""
    from lm_eval_rul.questions.seeding import derive_seed
    from lm_eval_rul.report.tagging.runs import FORM_METRIC
    from lm_eval_rul.report.tagging.sections import MAX_RESAMPLES

    by_id = {c["id"]: c for c in b}
    pairs = [(c, by_id[c["id"]]) for c in a if c["id"] in by_id]
    metric = FORM_METRIC[a[0]["form"]]
    left, right = [p[0] for p in pairs], [p[1] for p in pairs]
    estimate = old_figures_of(left)[metric] - old_figures_of(right)[metric]
    rng = np.random.default_rng(derive_seed("tagging-gain", settings.seed, *key))
    draws = []
    for _ in range(min(settings.n_resamples, MAX_RESAMPLES)):
        pick = rng.integers(0, len(pairs), len(pairs))
        one = (old_figures_of([left[i] for i in pick])[metric]
               - old_figures_of([right[i] for i in pick])[metric])  # fmt: skip
        if np.isfinite(one):
            draws.append(one)
    alpha = (1 - settings.confidence_level) / 2
    low, high = np.quantile(draws, [alpha, 1 - alpha]) if draws else (np.nan, np.nan)
    return {"estimate": float(estimate), "low": float(low), "high": float(high)}


def old_against_new(run_dirs: list[Path], resamples: int) -> dict[str, Any]:
    """Each tagging task's rows (every run's figures) and gains by the old code and by
    this one, timed; the gains with ``resamples`` resamples each on both sides (the old
    loop's cost is linear in resamples), their estimates and intervals compared."""
    from lm_eval_rul.report import ReportSettings, load_runs
    from lm_eval_rul.report.tagging import sections as tagging

    settings = ReportSettings(n_resamples=resamples)
    runs = load_runs(run_dirs)
    found = defaultdict(list)
    for run in runs:
        for task in run.tasks.values():
            if task.tagging_clips:
                found[task.task].append((run, task.tagging_clips))
    per_task, worst = {}, 0.0
    for name, members in sorted(found.items()):
        seconds = {"rows_old": 0.0, "rows_new": 0.0, "gains_old": 0.0, "gains_new": 0.0}
        for _run, clips in members:
            for label, function in (("old", old_figures_of), ("new", tagging.figures_of)):
                start = time.process_time()
                function(clips)
                seconds[f"rows_{label}"] += time.process_time() - start
        original = next(clips for run, clips in members if run.setting == "original")
        for run, clips in members:
            if run.setting == "original":
                continue
            key = (name, run.model, run.setting)
            start = time.process_time()
            old = old_gain(original, clips, settings, key)
            seconds["gains_old"] += time.process_time() - start
            start = time.process_time()
            new = tagging._gain(original, clips, settings, key)
            seconds["gains_new"] += time.process_time() - start
            worst = max(worst, *(abs(old[k] - new[k]) for k in ("estimate", "low", "high")))
        per_task[name] = {k: round(v, 3) for k, v in seconds.items()}
    return {"resamples": resamples, "cpu_seconds": per_task, "max_abs_difference": worst}


def grow_all(template: Path, root: Path, clips: int | None, seed: int) -> list[Path]:
    return [grow_run(template, root, condition, signal, clips, seed,
                     stamp=f"2026-01-0{k + 1}T00-00-00.000000")
            for k, (condition, signal) in enumerate(CONDITIONS.items())]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--likelihood", action="store_true",
                        help="also the tag-likelihood tasks (gtzan, mtg_*, magnatagatune)")
    parser.add_argument("--clips", type=int, default=None,
                        help="clips of every tagging task (default: the real splits' sizes)")
    parser.add_argument("--old-resamples", type=int, default=20,
                        help="resamples per gain of the old-against-new comparison (default "
                        "20; both codes' cost is linear in them, the table scales to 1,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", default=None, help="write the runs here (kept)")
    parser.add_argument("--reuse", action="store_true",
                        help="with --keep: report on the runs grown there before")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.keep) if args.keep else Path(tmp)
        reuse = args.reuse and (root / "runs").is_dir()
        for grown in ("report",) if reuse else ("runs", "report"):
            if (root / grown).exists():
                shutil.rmtree(root / grown)
        if reuse:
            run_dirs = [root / "runs" / c for c in CONDITIONS]
        else:
            start = time.perf_counter()
            template = template_run(root / "setup", args.likelihood)
            print(f"template run: {time.perf_counter() - start:.1f} s", file=sys.stderr)
            start = time.perf_counter()
            run_dirs = grow_all(template, root / "runs", args.clips, args.seed)
            print(f"grown runs: {time.perf_counter() - start:.1f} s", file=sys.stderr)
        sections = Sections()
        start, cpu = time.perf_counter(), time.process_time()
        report = timed_report(run_dirs, root / "report", sections)
        total, total_cpu = time.perf_counter() - start, time.process_time() - cpu
        comparison = old_against_new(run_dirs, args.old_resamples)
    sizes = {name: {"clips": data["rows"][0]["n"], "tags": len(data["per_tag"]["tags"])
                    if data.get("per_tag") else None, "runs": len(data["rows"])}
             for name, data in report["tagging"]["tasks"].items()}  # fmt: skip
    print("| section | wall s | CPU s |\n|---|---:|---:|")
    for name, seconds in sections.seconds.items():
        print(f"| {name} | {seconds:.2f} | {sections.cpu[name]:.2f} |")
    print(f"| **report, total** | **{total:.2f}** | **{total_cpu:.2f}** |\n")
    scale = MAX_RESAMPLES / args.old_resamples
    print(f"| tagging task | rows: old CPU s | new | gains: old CPU s (x{scale:g} from "
          f"{args.old_resamples} resamples) | new (the report's 1,000) | gains: old / new |")
    print("|---|---:|---:|---:|---:|---:|")
    totals = defaultdict(float)
    for name, cpu in comparison["cpu_seconds"].items():
        old, new = cpu["gains_old"] * scale, sections.cpu[f"tagging {name}: gains (bootstrap)"]
        for key, value in (("rows_old", cpu["rows_old"]), ("rows_new", cpu["rows_new"]),
                           ("gains_old", old), ("gains_new", new)):  # fmt: skip
            totals[key] += value
        print(f"| {name} | {cpu['rows_old']:.2f} | {cpu['rows_new']:.2f} | {old:.1f} | "
              f"{new:.2f} | {old / max(new, 1e-9):.0f}x |")
    print(f"| **all** | {totals['rows_old']:.2f} | {totals['rows_new']:.2f} | "
          f"{totals['gains_old']:.1f} | {totals['gains_new']:.2f} | "
          f"{totals['gains_old'] / max(totals['gains_new'], 1e-9):.0f}x |")
    print(json.dumps({"report_seconds": round(total, 2), "report_cpu_seconds": round(total_cpu, 2),
                      "tagging_tasks": sizes, "old_against_new": comparison}, indent=1))
    return 0 if comparison["max_abs_difference"] < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
