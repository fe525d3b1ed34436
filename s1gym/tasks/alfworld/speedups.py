"""Memos of textworld's pure, slow steps for ALFWorld's engine (:mod:`.engine`), installed once per process:
the PDDL->SAS translation per game, the grammar's condition parses and textgen's parses, a shallow
``copy_context`` and the text of every legal move. Each answers exactly what the step it stands in for would;
bench/alfworld.py checks that feedback and admissible commands stay identical to the raw engine's."""

from __future__ import annotations

import copy
import hashlib
import re
import sys
from collections import OrderedDict
from functools import lru_cache
from typing import Any

from s1gym.core.lru import LRU

__all__ = ["CachedQueries", "CachedTranslation", "CommandTexts", "copy_context", "install_caches",
           "memo_parse", "query_predicates"]


class CachedTranslation:
    """Stands in for the ``fast_downward`` module inside textworld's PDDL logic, memoising ``pddl2sas``.

    Why: textworld re-translates the PDDL problem twice on every reset (0.2-2 s
    of pure Python). The translation is a pure function of the texts and its
    result is only read, so one translation per game serves every reset.
    """

    def __init__(self, module: Any) -> None:
        self._module = module
        self._cache: LRU[tuple, Any] = LRU(64)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def pddl2sas(self, domain: str, problem: str, verbose: bool = False, optimize: bool = False):
        key = (
            hashlib.sha1(domain.encode()).hexdigest(),
            hashlib.sha1(problem.encode()).hexdigest(),
            optimize,
        )
        found = self._cache.get(key)
        if found is not None:
            return found
        argv = list(sys.argv)  # fast_downward's translator overwrites sys.argv; keep the host's
        try:
            out = self._module.pddl2sas(domain, problem, verbose=verbose, optimize=optimize)
        finally:
            sys.argv[:] = argv
        self._cache.put(key, out)
        return out


class CachedQueries:
    """Stands in for ``textworld.logic.Rule`` inside the text grammar, memoising ``parse_conjunctive_query``.

    Why: the grammar re-parses the same few condition strings (with tatsu) for
    every admissible command at every step; the parsed rule is only read.
    """

    def __init__(self, rule_class: Any) -> None:
        self._rule_class = rule_class
        self.parse_conjunctive_query = lru_cache(maxsize=4096)(rule_class.parse_conjunctive_query)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rule_class, name)


def memo_parse(parse: Any) -> Any:
    """Memoise textgen's ``_parse_and_convert`` (tatsu, about half of a step); callers mutate, so hand out copies."""
    cache: dict[tuple, Any] = {}

    def parse_and_convert(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("trace"):
            return parse(*args, **kwargs)
        key = (args, tuple(sorted(kwargs.items())))
        if key not in cache:
            if len(cache) > 20_000:
                cache.clear()
            cache[key] = parse(*args, **kwargs)
        return copy.deepcopy(cache[key])

    parse_and_convert.s1gym_memo = True  # type: ignore[attr-defined]
    return parse_and_convert


def install_caches(pddl_logic: Any) -> None:
    """Memoise textworld's pure, slow parsing steps (same results, read-only use) once per process."""
    from textworld.envs.pddl import textgen

    if not isinstance(pddl_logic.fast_downward, CachedTranslation):
        pddl_logic.fast_downward = CachedTranslation(pddl_logic.fast_downward)
    if not isinstance(textgen.Rule, CachedQueries):
        textgen.Rule = CachedQueries(textgen.Rule)
    if not getattr(textgen._parse_and_convert, "s1gym_memo", False):
        textgen._parse_and_convert = memo_parse(textgen._parse_and_convert)
    if not getattr(textgen.copy_context, "s1gym_memo", False):
        textgen.copy_context = copy_context


def copy_context(context: dict) -> dict:
    """textgen's ``copy_context`` with shallow copies of the two dicts it deep-copies.

    The derivation only adds keys to those dicts; the entity infos and
    variables in them are read, never changed, so copying the dicts is enough
    (a large share of a step was spent deep-copying them: docs/benchmarks.md). bench/alfworld.py checks
    that feedback and admissible commands stay identical to the raw engine's.
    """
    return {
        "state": context["state"],
        "facts": context["facts"],
        "variables": dict(context["variables"]),
        "mapping": dict(context["mapping"]),
        "entity_infos": context["entity_infos"],
    }


copy_context.s1gym_memo = True  # type: ignore[attr-defined]


class CommandTexts:
    """Stands in for the grammar's ``derive``, memoising the text of every legal move.

    Why: textworld derives the text of every applicable action at every step,
    running the template's state query (``go to`` lists the receptacles at a
    location) for each: most of the CPU of a step in a room with many moves
    (docs/benchmarks.md). A move's text is a function of its template, the
    action's arguments, the entity names and, for a template with a query, the
    facts of the predicates the query reads; the key holds all four, so the
    memo answers exactly what a derivation would. Other texts (the feedback of
    a move, the intro) read more of the state and are derived every time.
    """

    def __init__(self, logic: Any) -> None:
        self._derive = logic.grammar.derive
        #: template -> names of the predicates its queries read (empty: no query)
        self._templates = {a.template: query_predicates(a.template) for a in logic.actions.values()}
        #: id(entity infos) -> (the infos, pinned so that the id stays theirs; their texts by key)
        self._texts: OrderedDict[int, tuple[Any, dict]] = OrderedDict()

    def __call__(self, start: str, context: dict = {}) -> str:  # noqa: B006 - textgen's signature
        predicates = self._templates.get(start)
        if predicates is None:
            return self._derive(start, context)
        infos = context["entity_infos"]
        pinned = self._texts.get(id(infos))
        if pinned is None or pinned[0] is not infos:
            pinned = self._texts[id(infos)] = (infos, {})
            while len(self._texts) > 8:
                self._texts.popitem(last=False)
        facts = ()
        if predicates:
            facts = frozenset(
                p for sig, props in context["state"]._facts.items() if sig.name in predicates for p in props
            )
        key = (start, tuple(sorted((ph.name, var.name) for ph, var in context["mapping"].items())), facts)
        texts = pinned[1]
        if key not in texts:
            if len(texts) > 50_000:
                texts.clear()
            texts[key] = self._derive(start, context)
        return texts[key]


def query_predicates(template: str) -> frozenset[str]:
    """Names of the predicates the queries of a move template read (``{r.name | pred(r:t, x:u)}``)."""
    queries = re.findall(r"\|([^}]*)\}", template)
    return frozenset(name for q in queries for name in re.findall(r"([A-Za-z_][\w-]*)\s*\(", q))
