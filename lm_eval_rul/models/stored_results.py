"""``lalm``'s results kept on disk as they are computed: an interrupted run resumes.

Every log-likelihood and every generated answer is written to a
:class:`~lm_eval_rul.cache.ResultCache` (SQLite) as soon as its forward pass is done;
a rerun reads them back and runs only what is missing. Nothing is reused across
settings:

* the **scope** (:func:`results_scope`) holds everything that decides a result besides
  the request: the checkpoint (a local folder by its files' sizes and modification
  times, a hub model by its resolved commit), dtype, family, the rendered chat template
  around the question (chat_template, system_prompt and the processor's template), the
  audio condition and its settings (seed, noise length and σ, audio limit, sampling
  rate), the scoring path (``prefix_cache``), and the versions of this package,
  transformers and torch;
* the **key** of an entry (:func:`request_parts`) is the request (context and
  continuation, or context and generation settings) and what the model hears for that
  document: the clip's :func:`~lm_eval_rul.audio.condition_key` with its reference
  replaced by the file's content digest (:func:`~lm_eval_rul.audio.clip_identity`:
  an edited file is a new clip, and two clips exchanged by name are each still
  themselves), the noise's (seed, item id, length, σ), ...

Batch size and device are not in the scope: they change results only by float rounding
(the tests find the batched and unbatched paths equal on CPU), and a resumed run may
well use another batch size. ``model_args`` ``results_cache=PATH`` chooses the file,
``results_cache=none`` turns it off; the default is ``lalm_results.sqlite`` in
``$LM_EVAL_RUL_CACHE`` (default ``~/.cache/lm_eval_rul``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..adapters import adapter_named
from ..audio import clip_identity, condition_key
from ..cache import ResultCache

__all__ = [
    "DEFAULT_RESULTS_FILE",
    "FORMAT",
    "results_path",
    "results_scope",
    "checkpoint_identity",
    "request_parts",
    "StoredResults",
]

logger = logging.getLogger(__name__)

#: The default file, inside ``$LM_EVAL_RUL_CACHE``.
DEFAULT_RESULTS_FILE = adapter_named("lalm").results_file
#: Bumped whenever what is stored, or how it is computed, changes meaning.
FORMAT = 1
_OFF = ("none", "off", "false", "no", "0", "")
_WEIGHTS = (".safetensors", ".bin", ".json", ".model", ".txt", ".jinja", ".py")


def results_path(setting: Any, default_file: str = DEFAULT_RESULTS_FILE) -> Path | None:
    """The file ``results_cache=setting`` means, for ``lalm`` and ``lalm-api`` alike.

    Args:
        setting: ``auto`` (``default_file`` in ``$LM_EVAL_RUL_CACHE``), ``none`` (off; also
            ``off``, ``false``, ``no``, ``0``, empty) or a file path.
        default_file: The file name ``auto`` means (each model has its own).
    """
    if setting is None or str(setting).strip().lower() in _OFF:
        return None
    if str(setting).strip().lower() == "auto":
        from ..questions import cache_dir

        return cache_dir() / default_file
    return Path(str(setting)).expanduser()


def checkpoint_identity(pretrained: str, revision: str, config: Any) -> dict[str, Any]:
    """What identifies the weights: a folder's files (size, mtime) or a hub commit."""
    folder = Path(pretrained).expanduser()
    if folder.is_dir():
        files = sorted(
            (p.name, p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.iterdir()
            if p.is_file() and p.suffix in _WEIGHTS
        )
        return {"path": str(folder.resolve()), "files": files}
    return {
        "hub_id": pretrained,
        "revision": revision,
        "commit": getattr(config, "_commit_hash", None),
    }


def results_scope(
    lm: Any,
    *,
    model: str = "lalm",
    dtype: str | None = None,
    versions: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Everything besides the request that decides ``lm``'s results (see the module doc).

    Args:
        lm: The model (``lalm``, or ``lalm-vllm``, which builds its prompts the same way).
        model: The model's name: results of two engines never mix.
        dtype: The weights' dtype (default: ``lm.model.dtype``).
        versions: More package versions that decide the results (``lalm-vllm``: vLLM's).
    """
    import torch
    import transformers

    from .. import __version__

    spec = lm.spec
    return {
        "model": model,
        "format": FORMAT,
        "versions": {
            "lm_eval_rul": __version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            **(versions or {}),
        },
        "checkpoint": checkpoint_identity(lm.pretrained, lm.revision, lm._config),
        "dtype": dtype or str(lm.model.dtype),
        "family": lm.family.name,
        "template": list(lm._parts),
        # only where the template trims the question, so other scopes keep their keys
        **({"question_trimmed": True} if getattr(lm, "_trims_question", False) else {}),
        "chat_template": lm.use_chat_template,
        "system_prompt": lm.system_prompt,
        "prefix_cache": lm.prefix_cache,
        "audio": {
            "condition": spec.condition,
            "seed": spec.seed,
            "noise_seconds": spec.noise_seconds,
            "noise_std": spec.noise_std,
            "max_seconds": spec.max_seconds,
            "sampling_rate": spec.sampling_rate,
        },
    }


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=repr))


def request_parts(kind: str, args: Sequence[Any], heard: Any) -> list[Any]:
    """The key parts of one request: its kind, its arguments and what the model hears."""
    return [kind, _jsonable(list(args)), heard]


class StoredResults:
    """The results cache of one ``lalm`` model (or nothing, when turned off).

    Args:
        path: The SQLite file, or ``None`` (off).
        scope: :func:`results_scope` of the model.
    """

    def __init__(self, path: Path | None, scope: Mapping[str, Any]) -> None:
        self.cache = None if path is None else ResultCache(path, scope=scope)
        self._heard: dict[Hashable, Any] = {}
        self.reused = self.computed = 0

    @property
    def path(self) -> Path | None:
        return None if self.cache is None else self.cache.path

    def heard(self, doc: Mapping[str, Any], spec: Any) -> Any:
        """What the model hears for ``doc``, as key parts (files by their identity)."""
        return self.heard_key(condition_key(doc, spec))

    def heard_key(self, key: Hashable) -> Any:
        """A condition key as key parts: files by their identity, harness arrays by their
        content hash, nested keys (several clips in order, a clip reversed) part by part,
        ``["text"]`` for a text task."""
        if key not in self._heard:
            if key[0] == "clip":
                self._heard[key] = ["clip", clip_identity(key[1]), *key[2:]]
            elif any(isinstance(part, tuple) for part in key):
                self._heard[key] = [
                    self.heard_key(part) if isinstance(part, tuple) else _jsonable(part)
                    for part in key
                ]
            else:
                self._heard[key] = _jsonable(list(key))
        return self._heard[key]

    def lookup(self, keys: Sequence[Any]) -> list[Any | None]:
        """Stored values of ``keys`` (``None`` where missing)."""
        if self.cache is None:
            return [None] * len(keys)
        values = self.cache.get_many(keys)
        self.reused += sum(v is not None for v in values)
        return values

    def recall(
        self, kind: str, arguments: Sequence[Sequence[Any]], heard: Sequence[Hashable]
    ) -> tuple[list[Any], list[Any], list[int]]:
        """(keys, stored values or None, indices still to compute) of a batch of requests
        (their ``arguments`` and condition keys), the counts logged (:meth:`report`)."""
        keys = [
            request_parts(kind, list(args), self.heard_key(key))
            for args, key in zip(arguments, heard, strict=True)
        ]
        values = list(self.lookup(keys))
        todo = [i for i, value in enumerate(values) if value is None]
        self.report(kind, len(keys), len(keys) - len(todo))
        return keys, values, todo

    def store(self, items: Sequence[tuple[Any, Any]]) -> None:
        """Write (and commit) finished results: ``[(key, value), ...]``."""
        self.computed += len(items)
        if self.cache is not None and items:
            self.cache.put_many(items)

    def report(self, what: str, total: int, reused: int) -> None:
        """One log line: how many of ``total`` requests came from the file."""
        if self.cache is not None and total:
            logger.info(
                "lalm: %s: %d of %d requests read from %s, %d to compute "
                "(model_args results_cache=none recomputes everything)",
                what,
                reused,
                total,
                self.cache.path,
                total - reused,
            )
