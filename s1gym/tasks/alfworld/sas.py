"""Fast Downward's semantics of a translated ALFWorld task over state vectors (:class:`SasTask`), so that
ALFWorld's engine (:mod:`.engine`) computes a child's state instead of reading it from the library."""

from __future__ import annotations

from typing import Any

__all__ = ["SasTask", "sas_task"]


class SasTask:
    """Fast Downward's semantics of a translated task's operators and axioms, over state vectors.

    Why: reading the state from the library (``get_state``) formats a 1 KB name for each of up to 3,000
    variables, most of the CPU of a Search child in a large room once the rest was cached
    (docs/benchmarks.md). A successor's vector follows from its parent's and the operator: each effect
    whose conditions hold in the parent sets its variable, then the axioms give the derived variables
    (their default, or a rule's value where its body holds, layer by layer to a fixpoint). Vectors are
    ``bytes``, one digit (the value's index) per variable. :meth:`parse` answers ``None`` for a task
    with a variable that is not binary; its states are read from the library.
    """

    def __init__(self, effects: list, rules: list, defaults: dict[int, int]) -> None:
        #: per operator: (conditions ((var, value), ...), var, value) for each effect
        self.effects = effects
        #: (layer, conditions, var, value), in layer order
        self.rules = rules
        #: derived variable -> its default value
        self.defaults = defaults

    @classmethod
    def parse(cls, sas: str) -> SasTask | None:
        layers = []
        for block in sas.split("begin_variable\n")[1:]:
            lines = block.split("\n", 3)
            if lines[2] != "2":
                return None
            layers.append(int(lines[1]))
        init = sas.split("begin_state\n", 1)[1].split("\nend_state", 1)[0].split("\n")
        effects = []
        for block in sas.split("begin_operator\n")[1:]:
            lines = block.split("\n")
            n_prevail = int(lines[1])
            n_effects = int(lines[2 + n_prevail])
            op = []
            for line in lines[3 + n_prevail : 3 + n_prevail + n_effects]:
                f = [int(x) for x in line.split()]
                conds = tuple((f[1 + 2 * i], f[2 + 2 * i]) for i in range(f[0]))
                op.append((conds, f[1 + 2 * f[0]], f[3 + 2 * f[0]]))  # ... var, pre, post
            effects.append(tuple(op))
        rules = []
        for block in sas.split("begin_rule\n")[1:]:
            lines = block.split("\n")
            n = int(lines[0])
            conds = tuple(tuple(int(x) for x in line.split()) for line in lines[1 : 1 + n])
            var, _, new = (int(x) for x in lines[1 + n].split())
            rules.append((layers[var], conds, var, new))
        rules.sort(key=lambda r: r[0])
        defaults = {v: int(init[v]) for v, layer in enumerate(layers) if layer >= 0}
        return cls(effects, rules, defaults)

    def successor(self, values: bytes, operator: int) -> bytes:
        new = bytearray(values)
        for conds, var, value in self.effects[operator]:
            if all(values[c] == 48 + v for c, v in conds):
                new[var] = 48 + value
        if self.defaults:
            for var, value in self.defaults.items():
                new[var] = 48 + value
            changed = True
            while changed:
                changed = False
                for _, conds, var, value in self.rules:
                    if new[var] != 48 + value and all(new[c] == 48 + v for c, v in conds):
                        new[var] = 48 + value
                        changed = True
        return bytes(new)


def sas_task(ps: Any) -> SasTask | None:
    """``ps``'s task as a :class:`SasTask`, parsed once per loaded task (``None``: not binary)."""
    task = getattr(ps, "_s1gym_sas_task", False)
    if task is False:
        task = ps._s1gym_sas_task = SasTask.parse(ps.sas)
    return task
