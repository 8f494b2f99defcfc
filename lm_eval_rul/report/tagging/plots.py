"""The tagging figure: per-tag ROC-AUC of ``original`` against ``noise`` for one model
(one point per tag; above the diagonal, the tag is ranked better with the clip)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..plots import pyplot, save_figure

__all__ = ["per_tag_auc_scatter", "draw_tagging_figures"]


def per_tag_auc_scatter(path: Path, data: dict[str, Any], title: str) -> Path:
    """Scatter of per-tag ROC-AUC, noise (x) vs original (y), with the diagonal and 0.5."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    ax.plot([0, 1], [0, 1], color="0.6", linewidth=1, linestyle="--")
    ax.axhline(0.5, color="0.85", linewidth=1)
    ax.axvline(0.5, color="0.85", linewidth=1)
    ax.scatter(data["noise"], data["original"], s=18, color="tab:blue")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("ROC-AUC per tag, audio=noise")
    ax.set_ylabel("ROC-AUC per tag, audio=original")
    ax.set_title(title)
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
