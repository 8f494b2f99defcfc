"""Count real forward passes of torch modules, for tests and benchmarks.

Forward hooks on the modules themselves, so a count never trusts the caller's own
bookkeeping. :class:`CallCounter` counts one module's calls and the batch rows they
processed; :class:`ForwardCounter` counts an audio LM's audio encoder and language model.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CallCounter", "ForwardCounter"]


def _rows(args: tuple, kwargs: dict) -> int:
    tensor = kwargs.get("inputs_embeds")
    if tensor is None:
        tensor = kwargs.get("input_ids", args[0] if args else None)
    return 0 if tensor is None else int(tensor.shape[0])


class CallCounter:
    """Forward calls of one module (``calls``) and the rows they processed (``rows``).

    Counting starts at construction; :meth:`close` (or leaving a ``with`` block) removes
    the hook.

    Args:
        module: Any ``torch.nn.Module`` (a whole model, or its language model).
    """

    def __init__(self, module: Any) -> None:
        self.calls = 0
        self.rows = 0
        self._handle = module.register_forward_hook(self._hit, with_kwargs=True)

    def _hit(self, _module: Any, args: tuple, kwargs: dict, _output: Any) -> None:
        self.calls += 1
        self.rows += _rows(args, kwargs)

    def reset(self) -> tuple[int, int]:
        """Return ``(calls, rows)`` so far and start again from zero."""
        counts = (self.calls, self.rows)
        self.calls = self.rows = 0
        return counts

    def close(self) -> None:
        self._handle.remove()

    def __enter__(self) -> CallCounter:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()


class ForwardCounter:
    """Count forward calls of an audio LM's audio encoder and language model.

    Hooks ``*.audio_tower`` and ``*.language_model`` (present in every supported family).
    ``audio`` and ``language`` count calls; ``audio_rows`` and ``language_rows`` sum their
    batch sizes.

    Args:
        model: The loaded transformers audio LM (``LALM.model``).

    Example:
        >>> with ForwardCounter(lm.model) as counts:  # doctest: +SKIP
        ...     lm.loglikelihood(requests)
        >>> counts.audio, counts.language  # doctest: +SKIP
    """

    def __init__(self, model: Any) -> None:
        modules = dict(model.named_modules())
        self._audio_tower = _first_module(modules, "audio_tower")
        self._language_model = _first_module(modules, "language_model")
        self._audio: CallCounter | None = None
        self._language: CallCounter | None = None

    @property
    def audio(self) -> int:
        return self._audio.calls if self._audio else 0

    @property
    def audio_rows(self) -> int:
        """Clips (or windows) encoded: the batch rows of the audio encoder's calls."""
        return self._audio.rows if self._audio else 0

    @property
    def language(self) -> int:
        return self._language.calls if self._language else 0

    @property
    def language_rows(self) -> int:
        return self._language.rows if self._language else 0

    def __enter__(self) -> ForwardCounter:
        self._audio = CallCounter(self._audio_tower)
        self._language = CallCounter(self._language_model)
        return self

    def __exit__(self, *_exc: Any) -> None:
        self._audio.close()
        self._language.close()


def _first_module(modules: dict, suffix: str) -> Any:
    for name, module in modules.items():
        if name.split(".")[-1] == suffix:
            return module
    raise ValueError(f"no submodule named *.{suffix} (modules: {sorted(modules)[:20]})")
