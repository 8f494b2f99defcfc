"""``--model hf`` arguments checked before the model loads.

The harness's ``HFLM`` takes its own named arguments and passes every other one to
transformers' ``from_pretrained``, which reads its own, then the checkpoint's config
attributes, and hands what is left to the model's constructor: a misspelt ``dtpye=``
only fails there, after the weights have loaded, in a long ``TypeError``. The names
accepted are collected from the installed libraries themselves (``HFLM.__init__``'s
signature and the keywords it and ``from_pretrained`` read, the config's attributes),
so a harness or transformers upgrade needs no list kept here.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
from collections.abc import Mapping
from typing import Any

from ..errors import UserInputError

__all__ = ["HFModelArgsError", "check_hf_model_args", "accepted_hf_args"]

#: ``kwargs.pop("name"`` / ``kwargs.get("name"`` / ``kwargs["name"]`` in a library's source.
_READ_KEYWORD = re.compile(r"""kwargs(?:\.(?:pop|get)\(\s*|\[\s*)["'](\w+)["']""")
#: ``for name in ["a", "b"]: kwargs.pop(name, None)``: names dropped as no longer used.
_READ_IN_LOOP = re.compile(r"for (\w+) in \[([^\]]*)\]:\s*\n[^\n]*kwargs\.pop\(\1\b")


class HFModelArgsError(UserInputError, TypeError):
    """A ``--model_args`` name neither ``HFLM`` nor ``from_pretrained`` takes."""


def _named_parameters(function: Any) -> set[str]:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return set()
    keep = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    return {p.name for p in parameters if p.kind not in keep and p.name != "self"}


def _keywords_read(*modules: Any) -> set[str]:
    names: set[str] = set()
    for module in modules:
        try:
            source = inspect.getsource(module)
        except (OSError, TypeError):
            continue
        names |= set(_READ_KEYWORD.findall(source))
        for _, listed in _READ_IN_LOOP.findall(source):
            names |= set(re.findall(r"""["'](\w+)["']""", listed))
    return names


@functools.lru_cache(maxsize=1)
def _library_names() -> frozenset[str]:
    """Everything ``HFLM`` and ``from_pretrained`` read, whatever the checkpoint."""
    import lm_eval.models.huggingface as harness_hf
    import transformers.configuration_utils as configuration_utils
    import transformers.modeling_utils as modeling_utils
    from lm_eval.models.huggingface import HFLM
    from transformers import PretrainedConfig, PreTrainedModel

    names = _named_parameters(HFLM.__init__)
    names |= _named_parameters(PreTrainedModel.from_pretrained)
    names |= _named_parameters(PretrainedConfig.__init__)
    names |= set(PretrainedConfig().to_dict())
    names |= _keywords_read(harness_hf, modeling_utils, configuration_utils)
    return frozenset(names)


def _config_names(model_args: Mapping[str, Any]) -> set[str] | None:
    """The checkpoint's config attributes (overridable as ``from_pretrained`` keywords), read
    from a local folder or the hub cache only; None when it cannot be read without network."""
    pretrained = model_args.get("pretrained")
    if not isinstance(pretrained, str) or not pretrained:
        return None
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(
            pretrained,
            revision=model_args.get("revision") or None,
            subfolder=model_args.get("subfolder") or "",
            trust_remote_code=str(model_args.get("trust_remote_code", "")).lower() == "true",
            local_files_only=True,
        )
    except Exception:  # noqa: BLE001 - not in reach offline: the config's names are unknown
        return None
    names = set(config.to_dict())
    for sub in ("text_config", "llm_config"):
        nested = getattr(config, sub, None)
        if nested is not None and hasattr(nested, "to_dict"):
            names |= set(nested.to_dict())
    return names


def accepted_hf_args(model_args: Mapping[str, Any]) -> tuple[frozenset[str], bool]:
    """The names ``--model hf`` accepts for this checkpoint, and whether its config was
    read (else a name may still be one of its config attributes)."""
    config = _config_names(model_args)
    return _library_names() | frozenset(config or ()), config is not None


def check_hf_model_args(model: str, model_args: Mapping[str, Any]) -> None:
    """Refuse a ``--model_args`` name that ``HFLM`` / ``from_pretrained`` would not take.

    With the checkpoint's config at hand every unknown name is refused; without it (a hub
    model not yet downloaded) only a name close to a known one, which is surely a typo.

    Raises:
        HFModelArgsError: naming each wrong name and the closest known one.
    """
    accepted, complete = accepted_hf_args(model_args)
    unknown = [name for name in model_args if name not in accepted]
    shown = []
    for name in unknown:
        close = difflib.get_close_matches(name, sorted(accepted), n=1, cutoff=0.75)
        if close or complete:
            shown.append(f"{name}=" + (f" (did you mean {close[0]}?)" if close else ""))
    if not shown:
        return
    raise HFModelArgsError(
        f"--model {model} does not take model_args {', '.join(shown)}: neither the "
        "harness's HFLM nor transformers' from_pretrained reads "
        f"{'them' if len(shown) > 1 else 'it'}, so the run would fail after loading the "
        "weights. Fix the name, or drop it."
    )
