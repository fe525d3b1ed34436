"""What a (wrapped) policy *is*, as the job folders record it and ``s1 table`` keys its rows.

One description for one setup, whether it was built from the command line
(``--policy uniform --wrap search``) or passed as an object
(``evaluate(task, Search(Uniform(), budget=100))``): the innermost policy's
name and options, then the wrappers outermost first with their options. Options
come from each object's ``options()`` (the settings that make it what it is:
Jev's model and base URL, Search's non-default config...), so two jobs against
different models or budgets never share a row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from s1gym.wrappers import Wrapper

__all__ = ["AgentDescription", "describe"]


@dataclass(frozen=True)
class AgentDescription:
    policy: str
    policy_options: Mapping[str, Any] = field(default_factory=dict)
    #: ``(kind, options)`` outermost first
    wrappers: tuple[tuple[str, Mapping[str, Any]], ...] = ()

    @property
    def label(self) -> str:
        """``policy`` or ``policy+search+lookahead`` (Harbor's agent name, the progress bar's label)."""
        return "+".join((self.policy, *(kind for kind, _ in self.wrappers)))

    @property
    def wrapper_kinds(self) -> list[str]:
        return [kind for kind, _ in self.wrappers]

    def as_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "policy_options": dict(self.policy_options),
            "wrappers": [{"kind": k, "options": dict(o)} for k, o in self.wrappers],
            "label": self.label,
        }

    def key(self) -> str:
        """A canonical text of the whole setup (equal setups, equal keys)."""
        return json.dumps(self.as_dict(), sort_keys=True, default=repr)

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> AgentDescription:
        return AgentDescription(
            str(data.get("policy", "?")),
            dict(data.get("policy_options") or {}),
            tuple((w.get("kind", "?"), dict(w.get("options") or {})) for w in data.get("wrappers") or ()),
        )


def describe(policy: Any) -> AgentDescription:
    """The description of ``policy`` (a Policy, possibly wrapped)."""
    wrappers: list[tuple[str, Mapping[str, Any]]] = []
    inner = policy
    while isinstance(inner, Wrapper):
        wrappers.append((inner.kind, _options(inner)))
        inner = inner.policy
    name = getattr(inner, "name", None) or type(inner).__name__.lower()
    return AgentDescription(str(name), _options(inner), tuple(wrappers))


def _options(obj: Any) -> dict[str, Any]:
    """``obj.options()``, plus its ``model`` and ``base_url`` attributes when it has them (a user policy
    against a model names it that way), so jobs against different models never share a row."""
    method = getattr(obj, "options", None)
    out: dict[str, Any] = {}
    if callable(method):
        try:
            out = dict(method() or {})
        except Exception:  # noqa: BLE001 - a user policy's options() must not stop a job
            out = {}
    for attr in ("model", "base_url"):
        value = getattr(obj, attr, None)
        if attr not in out and isinstance(value, str) and value:
            out[attr] = value
    return {str(k): _plain(v) for k, v in out.items()}


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return getattr(value, "__name__", None) or getattr(value, "name", None) or type(value).__name__
