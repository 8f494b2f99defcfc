""":class:`AudioSpec`: what the model wants to hear (rate, limit, condition and its settings)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import AudioError, UnknownConditionError
from .registry import Condition, condition_names, condition_parameters, registered_conditions

__all__ = ["AudioSpec"]


class AudioSpec:
    """What the model wants to hear, built once per model with its :class:`Condition`.

    Args:
        sampling_rate: The processor's rate (``feature_extractor.sampling_rate``).
        max_seconds: The family's longest input; longer audio is trimmed with a warning.
        condition: A registered condition, or its name (:func:`condition_names`).
        **params: Values of the conditions' parameters (:func:`condition_parameters`:
            ``seed``, ``noise_seconds``, ``noise_std``...); the others keep their
            defaults. Each is read as an attribute (``spec.noise_std``).

    Attributes:
        audio_condition: The :class:`Condition` object.
        condition: Its name.
        params: Every condition parameter's value (given or default).
        given: The names of ``params`` the caller gave (a warning about a setting is said
            only when the user chose it).
    """

    __slots__ = ("sampling_rate", "max_seconds", "audio_condition", "params", "given")

    def __init__(
        self,
        sampling_rate: int,
        max_seconds: float | None,
        condition: str | Condition = "original",
        **params: Any,
    ) -> None:
        if not isinstance(condition, Condition):
            if condition not in condition_names():
                raise UnknownConditionError(condition, condition_names())
            condition = next(c for c in registered_conditions() if c.name == condition)
        declared = condition_parameters()
        unknown = sorted(set(params) - set(declared))
        if unknown:
            raise TypeError(
                f"AudioSpec: no audio condition reads {', '.join(unknown)} "
                f"(known: {', '.join(declared)})"
            )
        if int(sampling_rate) <= 0:
            raise AudioError(f"sampling_rate must be positive, got {sampling_rate!r}")
        if max_seconds is not None and max_seconds <= 0:
            raise AudioError(f"max_audio_seconds must be positive, got {max_seconds!r}")
        for name, value in params.items():
            declared[name].check(value)
        values = {name: params.get(name, p.default) for name, p in declared.items()}
        for name, p in declared.items():
            if p.choices:  # a word is kept as the parameter spells it (``End`` -> ``end``)
                values[name] = p.read("audio", values[name])
        for name, value in (
            ("sampling_rate", sampling_rate),
            ("max_seconds", max_seconds),
            ("audio_condition", condition),
            ("params", values),
            ("given", frozenset(params)),
        ):
            object.__setattr__(self, name, value)
        condition.check_spec(self)

    @property
    def condition(self) -> str:
        """The name of :attr:`audio_condition`."""
        return self.audio_condition.name

    def __getattr__(self, name: str) -> Any:
        if name in ("params", "given", "audio_condition") or name.startswith("__"):
            raise AttributeError(name)
        try:
            return self.params[name]
        except KeyError:
            raise AttributeError(f"AudioSpec has no attribute or parameter {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"AudioSpec is frozen: cannot set {name}")

    def _identity(self) -> tuple[Any, ...]:
        return (self.sampling_rate, self.max_seconds, self.condition, sorted(self.params.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AudioSpec) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(repr(self._identity()))

    def __reduce__(self) -> tuple[Any, ...]:
        given = {name: self.params[name] for name in self.given}
        return (_rebuild, (self.sampling_rate, self.max_seconds, self.condition, given))

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return (
            f"AudioSpec(sampling_rate={self.sampling_rate!r}, max_seconds={self.max_seconds!r}, "
            f"condition={self.condition!r}, {settings})"
        )

    def settings(self) -> Mapping[str, Any]:
        """The parameters the condition itself reads (``noise``: seed, length, σ)."""
        return {p.name: self.params[p.name] for p in self.audio_condition.parameters}


def _rebuild(
    sampling_rate: int, max_seconds: float | None, condition: str, given: Mapping[str, Any]
) -> AudioSpec:
    return AudioSpec(sampling_rate, max_seconds, condition, **given)
