"""``lalm-api``'s ``--model_args``: the accepted values and their checks (nothing is sent)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .api_http import check_http_args
from .api_payload import DEFAULT_WAV_SUBTYPE, WAV_SUBTYPES
from .args import LALMArgumentError, audio_condition, validate_model_args

__all__ = ["LOGPROB_MODES", "API_PROTOCOLS", "check_api_model_args"]

#: ``logprobs=`` values (see :mod:`.api_letters`).
LOGPROB_MODES: tuple[str, ...] = ("auto", "prompt", "top", "none")
#: ``protocol=`` (the factual protocols) -> the inference settings a generation carries.
API_PROTOCOLS: dict[str, str] = {
    "rul": "temperature 0 and the task's max_tokens",
    "paper": "the provider's defaults (no temperature, no max_tokens sent)",
}
_SECRET_ARGS = ("api_key", "header", "auth_token")


def check_api_model_args(model_args: Mapping[str, Any], model_class: type) -> dict[str, Any]:
    """Validate ``lalm-api``'s ``--model_args`` without sending anything; return them converted.

    Raises:
        LALMArgumentError: A secret passed as an argument, a missing ``base_url`` or
            ``model``, a value of the wrong kind, a ``timeout`` not above 0, or a key (in
            ``$api_key_env``) no HTTP header can carry.
        UnknownModelArgsError: A name ``lalm-api`` does not take.
        UnknownConditionError: ``audio=`` names no condition.
    """
    if "cache" in model_args:
        raise LALMArgumentError(
            "lalm-api: model_args cache= is now results_cache= (the same name and values as "
            "lalm's: auto, a file path, or none)."
        )
    secrets = [name for name in _SECRET_ARGS if name in model_args]
    if secrets:  # never echo the value
        raise LALMArgumentError(
            f"lalm-api: do not pass {', '.join(secrets)} in --model_args (model_args are "
            "written to the results). Export the key in an environment variable and name it: "
            "api_key_env=OPENAI_API_KEY (the default)."
        )
    args = validate_model_args(model_args, model_class)
    for name in ("base_url", "model"):
        if not args.get(name) or not isinstance(args[name], str):
            raise LALMArgumentError(
                f"lalm-api: {name}= is required, e.g. --model_args "
                "base_url=http://localhost:8000/v1,model=Qwen/Qwen2-Audio-7B-Instruct"
            )
    defaults = {
        "audio": "original",
        "logprobs": "auto",
        "wav_subtype": DEFAULT_WAV_SUBTYPE,
        "protocol": "rul",
    }
    args = {**defaults, **args}
    args["audio"] = audio_condition(args["audio"])
    choices = {"logprobs": LOGPROB_MODES, "wav_subtype": WAV_SUBTYPES, "protocol": API_PROTOCOLS}
    for name, allowed in choices.items():
        value = str(args[name])
        args[name] = value.upper() if name == "wav_subtype" else value.lower()
        if args[name] not in allowed:
            raise LALMArgumentError(
                f"lalm-api: {name}={value!r} is not one of {', '.join(allowed)}."
            )
    check_http_args(args)  # timeout, retry_backoff, the key: before any request
    return args
