#!/usr/bin/env bash
# The main job: set up (scripts/setup.sh), then evaluate the offline default decision model
# (Search over the packaged all-MiniLM-L6-v2 model; no key, no network) on CookingWorld, next to
# flat odds under the same search on the same seeds, and print the comparison table.
# Extra arguments go to both `s1 run` calls (e.g. --episodes 10 --option size=medium).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
JOBS=${S1_JOBS:-jobs}
s1 run CookingWorld --policy local --wrap search --budget 100 --wrap-option episode_budget=1000 --episodes 5 --seed 0 \
    --option size=small --option fold=test --out "$JOBS" "$@"
s1 run CookingWorld --policy uniform --wrap search --budget 100 --wrap-option episode_budget=1000 --episodes 5 --seed 0 \
    --option size=small --option fold=test --out "$JOBS" "$@"
s1 table "$JOBS"
