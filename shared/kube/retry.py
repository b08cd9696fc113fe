"""Retry with exponential backoff for the failures that are worth retrying.

A 409 means "read again and redo the change", so the unit of retry is the caller's whole
read-modify-write function, not a single HTTP call; 429 honours the server's Retry-After;
5xx and broken connections back off and try again. Anything else (404, 403, 422, ...) is raised
at once, already mapped to the project's error classes. The sleep and the jitter source are
parameters so tests assert exact delays without waiting.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from shared.kube import errors as kube_errors

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How persistent to be."""

    attempts: int = 6
    """Calls in total, the first included."""
    base_delay: float = 0.05
    """Seconds before the second call; doubled for each later one."""
    max_delay: float = 5.0
    """Upper bound of one pause, so a long outage is polled rather than waited out blindly."""
    jitter: float = 0.5
    """Share of each pause that is random, so many controllers do not retry in lockstep."""


DEFAULT = RetryPolicy()


def delay_for(attempt: int, policy: RetryPolicy, *, unit: float) -> float:
    """The pause after the ``attempt``-th failure; ``unit`` in [0, 1) is the jitter draw."""
    base = min(policy.max_delay, policy.base_delay * 2.0 ** (attempt - 1))
    return base * (1 - policy.jitter) + base * policy.jitter * unit


def call(
    operation: Callable[[], T],
    *,
    policy: RetryPolicy = DEFAULT,
    what: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
    rand: Callable[[], float] = random.random,
) -> T:
    """Run ``operation`` until it succeeds, fails for good, or runs out of attempts.

    Raises the mapped error (a ``shared.errors.ToolError``) of the last failure.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return operation()
        except Exception as exc:
            error = kube_errors.from_exception(exc, where=what)
            if not isinstance(error, kube_errors.RETRYABLE) or attempt >= policy.attempts:
                if error is exc:
                    raise
                raise error from exc
            pause = delay_for(attempt, policy, unit=rand())
            if isinstance(error, kube_errors.Throttled) and error.retry_after is not None:
                pause = max(pause, min(error.retry_after, policy.max_delay))
            # A server that cannot be reached at all is said once, in the error that ends the
            # retries; a busy or conflicting server is worth a line per retry.
            level = logging.DEBUG if isinstance(error, kube_errors.ConnectionFailed) else logging.INFO
            logger.log(
                level,
                "retrying after %s (attempt %d of %d, pause %.2fs)",
                type(error).__name__,
                attempt,
                policy.attempts,
                pause,
                extra={"subject": what or "api"},
            )
            sleep(pause)
