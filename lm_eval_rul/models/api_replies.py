"""What ``lalm-api``'s endpoint answered: the errors a request ends in, and the reading
of a reply (is it a chat completion, the server's own error message, the endpoint URL)."""

from __future__ import annotations

import json
from typing import Any

from ..errors import UserInputError

__all__ = [
    "APIError",
    "APIAuthError",
    "APIModelNotFoundError",
    "APIRequestError",
    "APIUnavailableError",
    "chat_url",
    "is_chat_completion",
    "server_message",
]


class APIError(UserInputError):
    """A request of ``lalm-api`` failed for good (the message says why and what to do)."""


class APIAuthError(APIError):
    """The endpoint refused the credentials (HTTP 401/403, or an invalid-key body)."""


class APIModelNotFoundError(APIError):
    """The endpoint does not serve the model (HTTP 404)."""


class APIRequestError(APIError):
    """The endpoint rejected a request (a 4xx other than 401/403/404, or no quota left).

    Attributes:
        status: The HTTP status.
        server_message: The server's error message (the key redacted).
    """

    def __init__(self, message: str, *, status: int, server_message: str) -> None:
        super().__init__(message)
        self.status = status
        self.server_message = server_message


class APIUnavailableError(APIError):
    """The endpoint kept failing (429/5xx, connection errors) after every retry."""


def chat_url(base_url: str) -> str:
    """The chat-completions URL of ``base_url`` (``.../v1`` or the full endpoint URL)."""
    url = base_url.rstrip("/")
    return url if url.endswith("/chat/completions") else f"{url}/chat/completions"


def is_chat_completion(body: Any) -> bool:
    """Whether a 2xx body is a chat completion: ``choices[0].message`` is an object.

    A gateway may answer 200 with its own error (``{"error": {"message": "upstream
    request timed out", "code": 504}}``); such a body is a failed request, never an answer.

    >>> is_chat_completion({"choices": [{"message": {"content": "A"}}]})
    True
    >>> is_chat_completion({"error": {"message": "upstream request timed out", "code": 504}})
    False
    """
    choices = body.get("choices") if isinstance(body, dict) else None
    return (
        isinstance(choices, list)
        and bool(choices)
        and isinstance(choices[0], dict)
        and isinstance(choices[0].get("message"), dict)
    )


def server_message(text: str) -> str:
    """The error message of an error body (OpenAI, vLLM, Gemini list bodies, plain text)."""
    try:
        body: Any = json.loads(text)
    except ValueError:
        return " ".join(text.split())
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("message") or error.get("status") or error)
        return str(body.get("message") or error)
    return str(body)
