"""Fitted models whose family reads each candidate as feature names with one function: :class:`TokenModel`.

A :class:`TokenModel` is the shape every fitted model shares (:class:`s1gym.models.fitted.FittedModel`: a
move's logit is the sum of its feature names' weights) with a family's reader. A family makes its subclass
in its own folder with :func:`token_model`, naming the :attr:`~TokenModel.kind` its files carry and the
reader::

    BlackjackModel = token_model("BlackjackModel", "blackjack", blackjack_tokens, __name__)

and declares it in its :class:`~s1gym.family.Family` (``models={"blackjack": "pkg.module:BlackjackModel"}``);
a model with more to say (its own features version, a progress estimate) subclasses :class:`TokenModel`
as a frozen dataclass instead. No dense weights; a progress estimate only where the subclass names
``progress_tokens``. :func:`per_move` is the common shape of a reader: read the state once, then name
each move's features.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from s1gym.core import Situation
from s1gym.models.fitted import FittedModel

__all__ = ["FEATURES_VERSION", "TokenModel", "per_move", "token_model"]

T = TypeVar("T")

#: Bumped when a reader's feature names change, so a file fitted on other names is refused.
FEATURES_VERSION = 1


@dataclass(frozen=True)
class TokenModel(FittedModel):
    """Weights by feature name, read by the subclass's :attr:`read`."""

    #: what the model files of this class say they are (``"kind"``)
    kind: ClassVar[str] = ""
    #: the family's reader: per candidate, the feature names
    read: ClassVar[Callable[[Situation], list[list[str]]]]
    #: the features version the files must carry
    features_version: ClassVar[int] = FEATURES_VERSION

    def tokens(self, situation: Situation) -> list[list[str]]:
        return type(self).read(situation)

    @staticmethod
    def progress_tokens(situation: Situation) -> Sequence[str]:
        return ()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], path: str | Path) -> TokenModel:
        kind, version = data.get("kind"), data.get("features_version")
        if kind != cls.kind or version != cls.features_version:
            raise ValueError(f"{path}: not a {cls.kind} model of features version {cls.features_version} (kind "
                             f"{kind!r}, version {version}); refit it with its family's fitting script")
        return cls(data["weights"], progress=data.get("progress", {}), provenance=data.get("provenance", {}))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "features_version": self.features_version, "provenance": dict(self.provenance),
                "weights": {k: round(v, 4) for k, v in sorted(self.weights.items()) if abs(v) >= 1e-4},
                **({"progress": {k: round(v, 4) for k, v in sorted(self.progress.items())}} if self.progress else {})}


def token_model(name: str, kind: str, read: Callable[[Situation], list[list[str]]], module: str) -> type[TokenModel]:
    """A :class:`TokenModel` subclass for files of ``kind`` that reads with ``read``; ``module`` is the
    ``__name__`` of the module that binds it to ``name`` (so pickle and the family's ``models`` find it)."""
    cls = type(name, (TokenModel,), {
        "__module__": module,
        "__qualname__": name,
        "__doc__": f"Weights by the feature names :func:`{read.__name__}` reads (kind {kind!r}).",
        "kind": kind,
        "read": staticmethod(read),
    })
    return dataclass(frozen=True)(cls)


def per_move(situation: Situation, read: Callable[[str], T | None], names: Callable[[str, T], list[str]]
             ) -> list[list[str]]:
    """Per candidate, ``names(move, found)`` where ``found = read(state text)``; the move alone where the
    state does not read (the game is over)."""
    found = read(situation.state_text or "")
    return [[c.text] if found is None else names(c.text, found) for c in situation.candidates]
