#!/usr/bin/env bash
# Issue 51's A/B: the same jobs played by two checkouts, compared move by move by bench/ab_jobs.py.
#   bash bench/ab_family.sh OUT_DIR [PYTHONPATH_OF_THE_OTHER_CHECKOUT]
# With a second argument the jobs run on that code (a tree whose s1gym/ holds policies/ and wrappers/ as
# links, first on the path, so the installed s1gym is shadowed); without it, on this install. The arms and
# seeds were written down before either side ran (docs/benchmarks.md, "A family is a folder (issue 51)").
set -euo pipefail
OUT=$1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
[ $# -ge 2 ] && export PYTHONPATH=$2
s1() { (cd /tmp && python -m s1gym "$@" --out "$OUT" --workers 1); }
HARD=(--option num_locations=11 --option num_ingredients=5 --option num_distractors=10 --option include_doors=true)
MAIN=(CookingWorld "${HARD[@]}" --option fold=test --seed 100 --episodes 30)
SEARCH=(--wrap search --wrap-option episode_budget=1000)
# the main job's five arms
s1 run "${MAIN[@]}" --policy random
s1 run "${MAIN[@]}" --policy local
s1 run "${MAIN[@]}" --policy local --wrap lookahead
s1 run "${MAIN[@]}" --policy uniform "${SEARCH[@]}"
s1 run "${MAIN[@]}" --policy local "${SEARCH[@]}"
# every TWX game, test fold, seeds 700-704: Local, Lookahead(Local), Search(Local)
for game in CoinCollector TWC MapReader Arithmetic Sorting SimonSays PeckingOrder; do
    for arm in "" "--wrap lookahead" "${SEARCH[*]}"; do
        # shellcheck disable=SC2086
        s1 run "$game" --option fold=test --seed 700 --episodes 5 --policy local $arm
    done
done
# ALFWorld's six shipped scenes: Local, Lookahead(Local), Search(Lookahead(Local))
for arm in "" "--wrap lookahead" "--wrap search,lookahead"; do
    # shellcheck disable=SC2086
    s1 run ALFWorld --option split=scenes --seed 0 --episodes 6 --policy local $arm
done
# the web: six pages, seeds 50000-50002, Local and Search(Local, budget=20)
for page in MiniWoB-click-button MiniWoB-click-checkboxes MiniWoB-enter-text MiniWoB-login-user \
            MiniWoB-choose-list Flights; do
    s1 run "$page" --seed 50000 --episodes 3 --policy local
    s1 run "$page" --seed 50000 --episodes 3 --policy local --wrap search --wrap-option budget=20
done
# the robot: test fold, seeds 40-44, Lookahead(Local) and Search(Local)
s1 run PickPlace --option fold=test --seed 40 --episodes 5 --policy local --wrap lookahead
s1 run PickPlace --option fold=test --seed 40 --episodes 5 --policy local --wrap search
# the fitted token models: Blackjack 50 hands, 2048 3 games, tickets and injection 10 texts, calculator 3 goals
s1 run Blackjack --seed 0 --episodes 50 --policy local
s1 run 2048 --seed 0 --episodes 3 --policy local
s1 run TicketRouter --seed 0 --episodes 10 --policy local
s1 run InjectionGuard --seed 0 --episodes 10 --policy local
s1 run Calculator --seed 0 --episodes 3 --policy local
