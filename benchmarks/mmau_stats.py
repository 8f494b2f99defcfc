"""Counts and model-free baselines of MMAU's music items, and its official rule on set answers.

Reads MMAU's JSON (no audio, no model) and prints, for one subset (``music`` by default):
the number of items by sub-category and difficulty; the always-the-same-letter baselines
(the accuracy of answering A, B, C or D to every item) in the JSON's order (the
``official`` and ``lmms`` protocols) and in our seeded order (``rul``); and the accuracy
MMAU's official string-match rule gives to answers written in set ways (the answer's own
text, the text after a letter, "The answer is ...", each position's choice, a bare
letter, every choice listed), next to lmms-eval's letter reading of a bare "B".

Usage::

    python benchmarks/mmau_stats.py --data mmau-test-mini.json
    python benchmarks/mmau_stats.py --subset sound --json out.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from lm_eval_rul.mcqa.mmau.tasks import load_mmau
from lm_eval_rul.mcqa.mmau_parsing import mmau_lmms_answer, mmau_string_match

ANSWER_STYLES: dict[str, Callable[[dict[str, Any]], str]] = {
    "the answer's own text": lambda d: d["answer"],
    "'(B) ' + the answer's text": lambda d: f"(B) {d['answer']}",
    "'The answer is ' + the answer's text + '.'": lambda d: f"The answer is {d['answer']}.",
    "always the 1st choice's text": lambda d: d["choices"][0],
    "always the 2nd choice's text": lambda d: d["choices"][1],
    "a bare letter 'B'": lambda d: "B",
    "every choice listed": lambda d: ", ".join(d["choices"]),
}


def always_letter(docs: list[dict[str, Any]]) -> dict[str, float]:
    """Accuracy of answering each letter to every document (either copy of a repeated answer)."""
    width = max(len(d["options"]) for d in docs)
    letters = [chr(ord("A") + i) for i in range(width)]
    return {
        x: float(np.mean([i < len(d["options"]) and d["options"][i] == d["answer"]
                          for d in docs for i in [ord(x) - ord("A")]]))
        for x in letters
    }  # fmt: skip


def stats(data: str | None, subset: str) -> dict[str, Any]:
    metadata = {"mmau_subset": subset, **({"mmau_data_path": data} if data else {})}
    official = list(load_mmau(**metadata, protocol="official")["test"])
    seeded = list(load_mmau(**metadata, protocol="rul")["test"])
    rule = {
        name: float(np.mean([mmau_string_match(d["answer"], write(d), d["choices"])
                             for d in official]))
        for name, write in ANSWER_STYLES.items()
    }  # fmt: skip
    lmms_b = float(np.mean([
        (p := mmau_lmms_answer("B", d["options"])).letter is not None
        and d["options"][d["letters"].index(p.letter)] == d["answer"]
        for d in official
    ]))  # fmt: skip
    return {
        "n_items": len(official),
        "sub_categories": dict(Counter(d["sub_category"] for d in official).most_common()),
        "difficulties": dict(Counter(d["difficulty"] for d in official).most_common()),
        "always_letter_json_order": always_letter(official),
        "always_letter_seeded_order": always_letter(seeded),
        "official_rule_accuracy": rule,
        "lmms_reading_always_B": lmms_b,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="MMAU's JSON (default: downloaded)")
    parser.add_argument("--subset", default="music", help="music (default), sound, speech, all")
    parser.add_argument("--json", default=None, help="Also write the figures to this file")
    args = parser.parse_args()
    figures = stats(args.data, args.subset)
    print(f"{figures['n_items']} {args.subset} items")
    for key in ("sub_categories", "difficulties"):
        print(f"{key}: " + ", ".join(f"{k} {v}" for k, v in figures[key].items()))
    for key in ("always_letter_json_order", "always_letter_seeded_order"):
        print(f"{key}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures[key].items()))
    print("official rule's accuracy of answers written as:")
    for name, value in figures["official_rule_accuracy"].items():
        print(f"  {name}: {value:.3f}")
    print(f"lmms-eval's letter reading of always 'B': {figures['lmms_reading_always_B']:.3f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=1)


if __name__ == "__main__":
    main()
