#!/usr/bin/env bash
# The main job: set up (scripts/setup.sh), then evaluate offline decision models (no key, no network) on
# 30 hard CookingWorld games nobody tuned on (11 rooms with doors, 5 ingredients, 10 distractors), five
# arms on the same games:
#   random               a uniformly random legal move (the floor)
#   local                Local with the game's shipped model (s1gym/tasks/twx/data/local_cookingworld.json), one call a move
#   lookahead(local)     the same model shown each move's outcome and the moves it opens (one call a move)
#   search(uniform)      best-first search over forks with flat odds (at most 1000 calls a game)
#   search(local)        the same search guided by the model (and its progress estimate, Search's default)
# then prints the table and draws the solve-rate-against-calls and score pictures.
# Games: test-fold seeds 100-129 with the hard options (chosen before any run; the models were fitted on
# train-fold games and chosen on dev-fold ones; the TWX benchmark's held-out games are seeds 700-749).
# Extra arguments go to every `s1 run` call (e.g. --episodes 10 for a quick look, --workers 1 on a
# one-core machine).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
JOBS=${S1_JOBS:-jobs}
HARD=(--option num_locations=11 --option num_ingredients=5 --option num_distractors=10 --option include_doors=true)
GAMES=(CookingWorld "${HARD[@]}" --option fold=test --seed 100 --episodes 30 --workers 2 --out "$JOBS")
SEARCH=(--wrap search --wrap-option episode_budget=1000)
started=$SECONDS
s1 run "${GAMES[@]}" --policy random "$@"
s1 run "${GAMES[@]}" --policy local "$@"
s1 run "${GAMES[@]}" --policy local --wrap lookahead "$@"
s1 run "${GAMES[@]}" --policy uniform "${SEARCH[@]}" "$@"
s1 run "${GAMES[@]}" --policy local "${SEARCH[@]}" "$@"
s1 table "$JOBS" --plot "$JOBS/main.png"
echo "main job: $((SECONDS - started)) s of play; job folders in $JOBS/, pictures $JOBS/main*.png;" \
    "watch one game: s1 replay $JOBS/<job>/<trial> --out replay/"
