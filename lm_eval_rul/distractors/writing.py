"""The build's last stage: the dataset in the released schema, sorted by PI, and its report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..files import write_text_atomic
from .checkpoint import redact_args, write_json
from .config import BuildConfig
from .pi_summary import summarize_pi

__all__ = ["write_stage"]


def write_stage(
    config: BuildConfig,
    records: dict[str, dict[str, Any]],
    *,
    extra: dict[str, Any] | None = None,
    order: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Write the dataset (sorted by PI, highest first) and the build report (stage 4).

    Returns:
        The report dictionary (also written as ``<output>.report.json`` and ``.md``).
    """
    ids = list(order) if order is not None else list(records)
    ok = [records[i] for i in ids if records.get(i, {}).get("status") == "ok"]
    failed = [records[i] for i in ids if records.get(i, {}).get("status") == "failed"]
    ok.sort(key=lambda r: (-r["pi"], r["id"]))
    dataset = {
        r["id"]: {
            "question": r["question"],
            "caption": r["caption"] or "",
            "correct_answer": r["correct_answer"],
            "distractors": list(r["distractors"]),
            "PI": round(float(r["pi"]), 6),
        }
        for r in ok
    }
    write_json(config.output, dataset)
    report: dict[str, Any] = {
        "output": str(config.output),
        "settings": {
            "strategy": config.strategy,
            "protocol": config.protocol,
            "seed": config.seed,
            "model": config.model,
            "model_args": redact_args(config.model_args),
            "generator": config.generator,
            "generator_args": redact_args(config.generator_args),
            "pools": str(config.pools) if config.pools else None,
            "data": str(config.data) if config.data else None,
        },
        "n_questions": len(ids),
        "n_written": len(ok),
        "n_failed": len(failed),
        "failures": [
            {"id": r["id"], "stage": r.get("stage"), "error": r.get("error")} for r in failed
        ],
        "missing": [i for i in ids if i not in records],
        **(extra or {}),
    }
    if ok:
        report["pi_after"] = summarize_pi(
            [r["pi"] for r in ok], [_chance(r, config.protocol) for r in ok]
        )
    with_before = [r for r in ok if r.get("pi_before") is not None]
    if with_before:
        before = np.array([r["pi_before"] for r in with_before])
        after = np.array([r["pi"] for r in with_before])
        chance_before = np.array([_chance(r, config.protocol, before=True) for r in with_before])
        chance_after = np.array([_chance(r, config.protocol) for r in with_before])
        report["pi_before"] = summarize_pi(before.tolist(), chance_before.tolist())
        change: dict[str, Any] = {
            "n": len(with_before),
            "mean_before": float(before.mean()),
            "mean_after": float(after.mean()),
            "share_increased": float(np.mean(after > before)),
            "mean_chance_before": float(chance_before.mean()),
            "mean_chance_after": float(chance_after.mean()),
            "mean_above_chance_before": float((before - chance_before).mean()),
            "mean_above_chance_after": float((after - chance_after).mean()),
            "same_option_count": bool(np.allclose(chance_before, chance_after)),
        }
        if not change["same_option_count"]:
            change["note"] = (
                f"PI before and after come from prompts with different option counts (protocol "
                f"{config.protocol!r}: the original questions have fewer distractors than the "
                "four kept), so their chance levels differ; compare the PI above chance "
                "(mean_above_chance_*), not the raw means or share_increased."
            )
        report["pi_change"] = change
    report["per_question"] = [
        {"id": r["id"], "pi_before": r.get("pi_before"), "pi_after": r["pi"]} for r in ok
    ]
    json_path = config.output.with_name(config.output.stem + ".report.json")
    write_json(json_path, report)
    write_text_atomic(json_path.with_suffix(".md"), _report_markdown(report))
    return report


def _chance(record: dict[str, Any], protocol: str, *, before: bool = False) -> float:
    """A filter record's chance PI (``1 - 1/n_options``); computed for records written
    before it was stored."""
    stored = record.get("chance_before" if before else "chance")
    if stored is not None:
        return float(stored)
    n = len(record["original_distractors"] if before else record["distractors"])
    # release prompts leave one of 4 distractors out; otherwise every option is shown
    n_options = n if protocol == "release" and n == 4 else n + 1
    return 1.0 - 1.0 / n_options


def _report_markdown(report: dict[str, Any]) -> str:
    s = report["settings"]
    lines = [
        "# lm-eval-rul build report",
        "",
        f"- output: `{report['output']}`",
        f"- strategy `{s['strategy']}`, PI protocol `{s['protocol']}`, seed {s['seed']}",
        f"- scorer: `{s['model']}` `{s['model_args']}`",
    ]
    if s.get("generator"):
        lines.append(f"- generator: `{s['generator']}` `{s['generator_args']}`")
    lines += [
        f"- questions: {report['n_questions']}, written: {report['n_written']}, "
        f"failed: {report['n_failed']}, missing: {len(report['missing'])}",
    ]
    if "generation" in report:
        g = report["generation"]
        lines.append(
            f"- generation: {g['replies']} replies, {g['replies_without_candidates']} without a "
            f"parsable candidate, {len(g['failed_calls'])} question(s) whose calls failed, "
            f"{g['candidates']} candidates"
        )
    if "cleaning" in report:
        c = report["cleaning"]
        lines.append(
            f"- cleaning: {c['n_candidates_in']} candidates in, {c['n_candidates_out']} kept; "
            f"{sum(c['equal_to_correct'].values())} equal to the correct answer, "
            f"{sum(c['duplicates'].values())} duplicates, {sum(c['empty'].values())} empty"
        )
    for key, title in (("pi_before", "PI before"), ("pi_after", "PI after")):
        if key in report:
            p = report[key]
            lines += [
                "",
                f"## {title}",
                "",
                f"mean {p['mean']:.4f}, median {p['median']:.4f}, share above chance "
                f"{p['share_above_chance']:.3f} (n={p['n']})",
                "",
                "| bin | count |",
                "|---|---|",
            ]
            edges = p["bin_edges"]
            lines += [
                f"| {edges[i]:.1f}-{edges[i + 1]:.1f} | {c} |" for i, c in enumerate(p["histogram"])
            ]
    if "pi_change" in report:
        c = report["pi_change"]
        lines += [
            "",
            "## PI change",
            "",
            f"n={c['n']}: mean {c['mean_before']:.4f} before (chance "
            f"{c['mean_chance_before']:.3f}) -> {c['mean_after']:.4f} after (chance "
            f"{c['mean_chance_after']:.3f}); above chance {c['mean_above_chance_before']:+.4f} "
            f"-> {c['mean_above_chance_after']:+.4f}; share increased {c['share_increased']:.3f}",
        ]
        if "note" in c:
            lines += ["", f"Note: {c['note']}"]
    if report["failures"]:
        lines += ["", "## Failures", "", "| id | stage | error |", "|---|---|---|"]
        lines += [f"| {f['id']} | {f['stage']} | {f['error']} |" for f in report["failures"]]
    return "\n".join(lines) + "\n"
