"""The tagging figure: per-tag ROC-AUC of ``original`` against ``noise`` for one model
(one point per tag; above the diagonal, the tag is ranked better with the clip)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..plots import pyplot, save_figure

__all__ = ["per_tag_auc_scatter", "draw_tagging_figures"]


#: Up to this many tags are named beside their points; more are counted in the title.
_NAMED_TAGS = 12


def per_tag_auc_scatter(path: Path, data: dict[str, Any], title: str) -> Path:
    """Scatter of per-tag ROC-AUC, noise (x) vs original (y), with the diagonal and 0.5:
    the title counts the tags (each named beside its point when few), the side above the
    diagonal says the audio helps, and points at 0 and 1 are drawn whole."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.8, 5.8))
    ax.plot([0, 1], [0, 1], color="0.6", linewidth=1, linestyle="--")
    ax.axhline(0.5, color="0.85", linewidth=1)
    ax.axvline(0.5, color="0.85", linewidth=1)
    ax.scatter(data["noise"], data["original"], s=18, color="tab:blue", clip_on=False, zorder=3)
    tags = list(data.get("tags") or [])
    if len(tags) <= _NAMED_TAGS:
        for tag, x, y in zip(tags, data["noise"], data["original"], strict=True):
            ax.annotate(
                str(tag),
                (x, y),
                xytext=(4, 3),
                textcoords="offset points",
                fontsize=7,
                color="0.25",
                annotation_clip=False,
            )
    ax.text(
        0.03,
        0.97,
        "above the diagonal:\nthe audio helps (the clip ranks\nthe tag better than noise)",
        transform=ax.transAxes,
        va="top",
        fontsize=8,
        color="0.3",
    )
    ax.text(
        0.97,
        0.03,
        "below: the tag is ranked\nbetter without the clip",
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=8,
        color="0.3",
    )
    margin = 0.04  # a point at 0 or 1 is drawn whole, not cut by the axes
    ax.set_xlim(-margin, 1 + margin)
    ax.set_ylim(-margin, 1 + margin)
    ax.set_xlabel("ROC-AUC per tag, audio=noise")
    ax.set_ylabel("ROC-AUC per tag, audio=original")
    ax.set_title(f"{title} ({len(tags)} tag{'s' if len(tags) != 1 else ''})", fontsize=10)
    return save_figure(fig, path)


def draw_tagging_figures(tagging: dict[str, Any], out: Path) -> None:
    """One per-tag figure per likelihood task that has a model with original and noise."""
    for task, data in (tagging.get("tasks") or {}).items():
        if not data.get("per_tag"):
            continue
        model = data["per_tag"]["model"]
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{task}_{model}")
        path = per_tag_auc_scatter(
            out / "figures" / f"tagging_per_tag_auc_{name}.png",
            data["per_tag"],
            title=f"{model}: {data['name']}, per-tag ROC-AUC",
        )
        tagging["figures"][task] = str(path.relative_to(out))
