"""Write a :class:`~lm_eval_rul.diagnose.pipeline.Diagnosis`: JSON, Markdown, figures.

``OUT/findings.jsonl``: one JSON object per (dataset, question): its audit flags (rule,
field, matched words), every distractor with its similarity in each space, near-identical
and duplicate marks, and the judge's verdict when asked.
``OUT/diagnose.json``: every aggregate number. ``OUT/diagnose.md``: counts per rule with
examples, similarity statistics, near-identical and duplicate distractors, figures.
``OUT/figures/*.png``: similarity histograms, T5-vs-CLAP scatter, audit bars.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..files import atomic_write, write_json_atomic, write_text_atomic
from . import figures
from .audit import RULES
from .encoders import SPACES
from .pipeline import Diagnosis

__all__ = ["write_outputs", "render_markdown"]


def _ids(ids: list[str], limit: int = 8) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … (+{len(ids) - limit})" if len(ids) > limit else "") if ids else "–"


def _cell(text: str, limit: int = 70) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _similarity_section(summary: dict[str, Any], figure_names: list[str], n_rows: int) -> list:
    spaces = summary["embedding"].get("spaces", {})
    if not spaces:
        return ["## Distractor similarity", "", "Skipped (`--no_similarity`).", ""]
    lines = [
        "## Distractor similarity to the correct answer",
        "",
        "Cosine similarity of every distractor to its question's correct answer. Good "
        "perception-hard distractors are close as text (T5) and spread in music space (CLAP).",
        "",
        "| dataset | space | n | mean | std | median | 5th–95th pct | per-question spread | "
        "≥ threshold |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for d in summary["datasets"]:
        for space, s in d["similarity"].items():
            if not s.get("n"):
                continue
            spread = s["question_spread"]
            lines.append(
                f"| {d['name']} | {SPACES[space]} | {s['n']} | {s['mean']:.3f} | {s['std']:.3f} "
                f"| {s['median']:.3f} | {s['p05']:.3f}–{s['p95']:.3f} | "
                f"{'–' if spread is None else f'{spread:.3f}'} | "
                f"{s['above_threshold']} |"
            )
    both = " and ".join(f"{SPACES[s]} ≥ {v['near_threshold']:.2f}" for s, v in spaces.items())
    lines += [
        "",
        "*per-question spread*: the mean over questions of the standard deviation of their "
        "distractors' similarities.",
        "",
        *[f"![{name}](figures/{name}.png)" for name in figure_names],
        "",
        f"### Near-identical to the correct answer ({both})",
        "",
        "Likely correct answers in disguise.",
        "",
    ]
    for d in summary["datasets"]:
        rows = d["near_identical"]
        lines.append(
            f"**{d['name']}**: {len(rows)} distractor(s)"
            f" in {len({r['id'] for r in rows})} question(s)."
        )
        if rows:
            header = " | ".join(SPACES[s] for s in spaces)
            lines += ["", f"| id | correct answer | distractor | {header} |"]
            lines.append("|---|---|---|" + "---|" * len(spaces))
            for r in sorted(rows, key=lambda r: -min(r[s] for s in spaces))[:n_rows]:
                sims = " | ".join(f"{r[s]:.3f}" for s in spaces)
                lines.append(
                    f"| {r['id']} | {_cell(r['correct_answer'], 60)} | {_cell(r['text'], 60)} "
                    f"| {sims} |"
                )
            if len(rows) > n_rows:
                lines.append(f"\n… {len(rows) - n_rows} more in `diagnose.json`.")
        lines.append("")
    return lines


def _duplicates_section(summary: dict[str, Any], n_rows: int) -> list[str]:
    lines = ["### Duplicate options (exact, case-only, or spacing/punctuation-only)", ""]
    for d in summary["datasets"]:
        rows = d["duplicates"]
        lines.append(f"**{d['name']}**: {len(rows)} duplicate distractor(s).")
        if rows:
            lines += ["", "| id | distractor | repeats | kind |", "|---|---|---|---|"]
            # Copies of the correct answer first: they make a question unanswerable.
            ordered = sorted(rows, key=lambda r: r["duplicate_of"] != "correct_answer")
            for r in ordered[:n_rows]:
                lines.append(
                    f"| {r['id']} | {_cell(r['text'], 40)} | {r['duplicate_of']} | "
                    f"{r['duplicate_kind']} |"
                )
            if len(rows) > n_rows:
                lines.append(f"\n… {len(rows) - n_rows} more in `diagnose.json`.")
        by = {}
        for r in rows:
            if r["duplicate_of"] == "correct_answer":
                by.setdefault(r["duplicate_kind"], set()).add(r["id"])
        if by:
            kinds = "; ".join(
                f"{kind}: {_ids(sorted(ids, key=_order), 12)}" for kind, ids in sorted(by.items())
            )
            lines += ["", f"Questions listing their own correct answer as a distractor ({kinds})."]
        lines.append("")
    return lines


def _order(qid: str) -> tuple[int, int | str]:
    return (0, int(qid)) if qid.isdigit() else (1, qid)


def _audit_section(
    summary: dict[str, Any], findings: list[dict], n_examples: int, figure: bool
) -> list[str]:
    lines = [
        "## QA audit",
        "",
        *(["![audit](figures/audit.png)", ""] if figure else []),
        "Questions a listener cannot answer from the audio, flagged by pattern rules. "
        "*via question / answer / distractors*: questions where the rule matched that part.",
        "",
        "| rule | dataset | questions | via question | via answer | via distractors | flags | "
        "ids |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for rule in RULES:
        for d in summary["datasets"]:
            a = d["audit"][rule.name]
            f = a["by_field"]
            lines.append(
                f"| `{rule.name}` | {d['name']} | {a['questions']} | {f['question']} | "
                f"{f['correct_answer']} | {f['distractors']} | {a['flags']} | {_ids(a['ids'])} |"
            )
    for d in summary["datasets"]:
        lines.append(
            f"| any rule | {d['name']} | {d['audit']['any_rule']['questions']} of "
            f"{d['n_questions']} | | | | | |"
        )
    lines += ["", "### Rules and examples", ""]
    by_key = {(f["dataset"], f["id"]): f for f in findings}
    for rule in RULES:
        lines += [f"**`{rule.name}`**: {rule.matches}. Why: {rule.why}.", ""]
        for d in summary["datasets"]:
            hits = {
                qid: [f for f in by_key[(d["name"], qid)]["flags"] if f["rule"] == rule.name]
                for qid in d["audit"][rule.name]["ids"]
            }
            # Hits on the question or its answer first: distractor-only hits are milder.
            ranked = sorted(hits, key=lambda i: hits[i][0]["field"].startswith("distractors"))
            for qid in ranked[:n_examples]:
                finding, hit = by_key[(d["name"], qid)], hits[qid][0]
                lines.append(
                    f"- {d['name']} {qid}: Q “{_cell(finding['question'], 90)}” "
                    f"A “{_cell(finding['correct_answer'], 50)}” — “{_cell(hit['match'], 40)}” "
                    f"in {hit['field']}"
                )
        lines.append("")
    return lines


def _judge_section(summary: dict[str, Any], n_examples: int) -> list[str]:
    if not summary.get("judge"):
        return []
    j = summary["judge"]
    lines = [
        "## LLM judge",
        "",
        f"Model `{j['model']}` `{j['model_args']}`, stored beside the rule flags (never "
        "replacing them). Parse and call failures are counted, never guessed.",
        "",
        "| dataset | judged | answerable | unanswerable | parse failures | call failures | "
        "unanswerable among rule-flagged | unanswerable among unflagged |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for d in summary["datasets"]:
        s = d.get("judge")
        if not s:
            continue
        lines.append(
            f"| {d['name']} | {s['judged']} | {s['answerable']} | {s['unanswerable']} | "
            f"{s['parse_failure']} | {s['call_failure']} | "
            f"{s['unanswerable_among_flagged']} of {s['n_flagged_judged']} | "
            f"{s['unanswerable_among_unflagged']} of {s['n_unflagged_judged']} |"
        )
    lines.append("")
    for d in summary["datasets"]:
        if d.get("judge"):
            ids = d["judge"]["judge_only_ids"]
            lines.append(f"Unanswerable to the judge only, {d['name']}: {_ids(ids, n_examples)}.")
    return [*lines, ""]


def _encoding_section(summary: dict[str, Any]) -> list[str]:
    info = summary["embedding"]
    if not info.get("stats"):
        return []
    lines = [
        "## Encoding",
        "",
        f"Embedding cache: `{info['cache']}`." if info["cache"] else "No embedding cache.",
        "",
        "| space | checkpoint | texts | distinct | from cache | encoded | forward passes | "
        "truncated | seconds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for space, s in info["stats"].items():
        lines.append(
            f"| {SPACES[space]} | `{info['spaces'][space]['checkpoint']}` | {s['n_texts']} | "
            f"{s['n_unique']} | {s['n_cached']} | {s['n_encoded']} | {s['n_forward']} | "
            f"{s['n_truncated']} | {s['seconds']:.2f} |"
        )
    return [*lines, ""]


def render_markdown(
    diagnosis: Diagnosis,
    *,
    figure_names: list[str] | None = None,
    n_examples: int = 5,
    n_rows: int = 20,
) -> str:
    """``diagnose.md``: datasets, audit, similarity, duplicates, judge, encoding."""
    summary = diagnosis.summary
    lines = ["# lm-eval-rul diagnose", ""]
    for d in summary["datasets"]:
        unit = "pool candidates" if d["kind"] == "pools" else "distractors"
        line = (
            f"- **{d['name']}**: `{d['path']}` ({d['kind']}), {d['n_questions']} questions, "
            f"{d['n_distractors']} {unit}."
        )
        checks = d["checks"]
        if not checks["passed"]:
            line += (
                f" Read as released: {checks['n_problems']} option problem(s) the other commands "
                f"refuse (e.g. {_cell(checks['problems'][0], 90)}), listed under *Duplicate "
                "options*."
            )
        if checks["n_empty_dropped"]:
            line += f" {checks['n_empty_dropped']} empty candidate(s) dropped."
        lines.append(line)
    lines += [
        "",
        "Per-question findings are in `findings.jsonl`, every number in `diagnose.json`.",
        "",
    ]
    figure_names = figure_names or []
    lines += _audit_section(summary, diagnosis.findings, n_examples, "audit" in figure_names)
    lines += _similarity_section(
        summary, [n for n in figure_names if n.startswith("similarity")], n_rows
    )
    lines += _duplicates_section(summary, n_rows)
    lines += _judge_section(summary, n_examples)
    lines += _encoding_section(summary)
    return "\n".join(lines).rstrip() + "\n"


def write_outputs(diagnosis: Diagnosis, out_dir: str | Path, *, n_examples: int = 5) -> dict:
    """Write findings, summary, Markdown and figures under ``out_dir``; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    paths["findings"] = out / "findings.jsonl"
    with atomic_write(paths["findings"]) as handle:
        for finding in diagnosis.findings:
            handle.write(json.dumps(finding, ensure_ascii=False) + "\n")
    paths["json"] = out / "diagnose.json"
    write_json_atomic(paths["json"], diagnosis.summary)

    names = [d["name"] for d in diagnosis.summary["datasets"]]
    spaces = diagnosis.summary["embedding"].get("spaces", {})
    figure_names = []
    if spaces:
        values = {s: {n: diagnosis.similarities[(n, s)] for n in names} for s in spaces}
        thresholds = {s: v["near_threshold"] for s, v in spaces.items()}
        paths["similarity"] = figures.similarity_histograms(
            out / "figures" / "similarity.png",
            values,
            labels={s: SPACES[s] for s in spaces},
            thresholds=thresholds,
        )
        figure_names.append("similarity")
        if set(spaces) == {"t5", "clap"}:
            paths["scatter"] = figures.similarity_scatter(
                out / "figures" / "similarity_scatter.png",
                {
                    n: (diagnosis.similarities[(n, "t5")], diagnosis.similarities[(n, "clap")])
                    for n in names
                },
                axis_labels=(f"{SPACES['t5']} cosine", f"{SPACES['clap']} cosine"),
                thresholds=(thresholds["t5"], thresholds["clap"]),
            )
            figure_names.append("similarity_scatter")
    paths["audit"] = figures.audit_bars(
        out / "figures" / "audit.png",
        {
            d["name"]: {r.name: d["audit"][r.name]["questions"] for r in RULES}
            for d in diagnosis.summary["datasets"]
        },
        rules=[r.name for r in RULES],
    )
    figure_names.append("audit")
    markdown = render_markdown(diagnosis, figure_names=figure_names, n_examples=n_examples)
    paths["markdown"] = out / "diagnose.md"
    write_text_atomic(paths["markdown"], markdown)
    return paths
