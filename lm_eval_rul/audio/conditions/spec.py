""":class:`AudioSpec`: what the model wants to hear (rate, limit, condition and its settings)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..errors import AudioError, UnknownConditionError
from .registry import Condition, condition_named, condition_names

__all__ = ["AudioSpec"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AudioSpec:
    """What the model wants to hear.

    Attributes:
        sampling_rate: The processor's rate (``feature_extractor.sampling_rate``).
        max_seconds: The family's longest input; longer audio is trimmed with a warning.
        condition: The name of a registered condition (:func:`condition_names`).
        seed: Seed of the ``noise`` and ``random`` conditions.
        noise_seconds: Length of the ``noise`` and ``silence`` waveforms.
        noise_std: Standard deviation of the Gaussian noise.
    """

    sampling_rate: int
    max_seconds: float | None
    condition: str = "original"
    seed: int = 0
    noise_seconds: float = 10.0
    noise_std: float = 1.0

    def __post_init__(self) -> None:
        if self.condition not in condition_names():
            raise UnknownConditionError(self.condition, condition_names())
        if int(self.sampling_rate) <= 0:
            raise AudioError(f"sampling_rate must be positive, got {self.sampling_rate!r}")
        if self.max_seconds is not None and self.max_seconds <= 0:
            raise AudioError(f"max_audio_seconds must be positive, got {self.max_seconds!r}")
        if self.noise_seconds <= 0:
            raise AudioError(f"noise_seconds must be positive, got {self.noise_seconds!r}")
        if self.noise_std < 0:
            raise AudioError(f"noise_std must be >= 0, got {self.noise_std!r}")
        if (
            self.audio_condition.synthetic_length
            and self.max_seconds is not None
            and self.noise_seconds > self.max_seconds
        ):
            logger.warning(
                "noise_seconds=%g is longer than the model's limit of %g s; the %s is %g s long",
                self.noise_seconds,
                self.max_seconds,
                self.condition,
                self.max_seconds,
            )

    @property
    def audio_condition(self) -> Condition:
        """The :class:`Condition` object of :attr:`condition`."""
        return condition_named(self.condition)

    @property
    def noise_samples(self) -> int:
        """Number of samples of the ``noise`` / ``silence`` waveforms."""
        n = int(round(self.noise_seconds * self.sampling_rate))
        if self.max_seconds is not None:
            n = min(n, int(round(self.max_seconds * self.sampling_rate)))
        return max(n, 1)
