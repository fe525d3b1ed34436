"""Names -> constructors, for policies (``POLICIES``) and wrappers (``s1gym.wrappers.WRAPPERS``).

One lookup for every caller: ``make_policy``, ``wrap``, the command line (``--policy``, ``--wrap``) and
the runner's job spec all ask a :class:`Registry`, so a name is checked in one place and a name that is
not there gets one message wherever it was typed::

    unknown policy 'gpt'; choose one of: jev, chat, local, uniform, random, rule

A registry is a plain ``dict`` (name -> constructor), so ``name in POLICIES``, ``POLICIES["local"]``
and ``", ".join(WRAPPERS)`` go on working. Names are matched after stripping and lower-casing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

__all__ = ["Registry"]

T = TypeVar("T", bound=Callable[..., Any])


class Registry(dict[str, T], Generic[T]):
    """``kind`` names -> constructors; :meth:`key` checks a name, :meth:`make` builds one."""

    def __init__(self, kind: str, entries: dict[str, T]) -> None:
        super().__init__(entries)
        #: what the names name, for messages: ``"policy"``, ``"wrapper"``
        self.kind = kind

    def unknown(self, name: object, otherwise: str = "") -> str:
        """The message for a ``name`` that is not here; ``otherwise`` adds what the caller also accepts
        (``"give module:factory"``)."""
        extra = f" or {otherwise}" if otherwise else ""
        return f"unknown {self.kind} {name!r}; choose one of: {', '.join(self)}{extra}"

    def key(self, name: object, otherwise: str = "") -> str:
        """The registered name ``name`` stands for (any case, surrounding spaces ignored); a ``ValueError``
        with :meth:`unknown`'s message when there is none."""
        key = str(name).strip().lower()
        if key not in self:
            raise ValueError(self.unknown(name, otherwise))
        return key

    def keys_of(self, names: Sequence[str] | str) -> list[str]:
        """The registered names of a list (or a comma-separated string: ``"search,lookahead"``), in order;
        empty items are skipped, an unknown one is a ``ValueError``."""
        if isinstance(names, str):
            names = names.split(",")
        return [self.key(n) for n in names if str(n).strip()]

    def make(self, name: str, **kwargs: Any) -> Any:
        """The constructor ``name`` stands for, called with ``kwargs``."""
        return self[self.key(name)](**kwargs)
