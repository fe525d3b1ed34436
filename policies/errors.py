"""Typed errors raised by decision models.

The runner records any exception of a trial as that trial's ``exception_info``
and goes on with the job, so these types exist to make the record useful: the
class says what went wrong (no key, refused key, rate limit, server fault,
timeout, a malformed answer) and the message says what to do about it. No
message ever contains an API key: every error built from a remote reply goes
through :func:`redact` first.
"""

from __future__ import annotations

from collections.abc import Iterable

from s1gym.errors import S1GymError

__all__ = [
    "PolicyAuthError",
    "PolicyConfigError",
    "PolicyConnectionError",
    "PolicyError",
    "PolicyRateLimitError",
    "PolicyRequestError",
    "PolicyResponseError",
    "PolicyServerError",
    "PolicyTimeoutError",
    "redact",
]


class PolicyError(S1GymError, RuntimeError):
    """Base class: a decision model could not produce a decision."""


class PolicyConfigError(PolicyError, ValueError):
    """The policy is misconfigured (missing key, model or optional extra); raised at construction."""


class PolicyAuthError(PolicyError):
    """The service refused the credentials (HTTP 401/403)."""


class PolicyRateLimitError(PolicyError):
    """Still rate limited (HTTP 429) after the retries; ``retry_after_s`` is the server's last hint."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class PolicyServerError(PolicyError):
    """The service kept failing (HTTP 5xx) after the retries."""


class PolicyConnectionError(PolicyError, ConnectionError):
    """The service could not be reached after the retries."""


class PolicyTimeoutError(PolicyConnectionError, TimeoutError):
    """Requests kept timing out after the retries."""


class PolicyRequestError(PolicyError):
    """The service rejected the request itself (HTTP 400/404/422): a bug or a wrong model name."""


class PolicyResponseError(PolicyError):
    """The service answered, but the answer cannot be trusted (wrong labels, NaN, bad sums)."""


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every non-trivial secret replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text
