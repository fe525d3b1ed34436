"""Local's dense weights on CookingWorld when it plays without the game's fitted model
(``Local(pairs=False)``): fitted on CookingWorld train-fold gold paths (:mod:`s1gym.tasks.twx.fit_dense`
says how; the figures: docs/benchmarks.md, "Figures behind the code").

Scored as the mean negative log-likelihood of the gold move among the moves Search keeps (losing moves
and moves that change nothing removed), with Search's flat odds mixed in. Twelve weights are fitted on the
kept moves; ``info_move`` (look, examine, inventory) alone over all candidates with the others fixed, for
Local played on its own; the two lookahead features last, alone, on the kept moves as Lookahead shows them.
The two ``described_*`` cosines stay at 0 (without lookahead they repeat ``goal_cos`` and ``scene_cos``).
"""

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
