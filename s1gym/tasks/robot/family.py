"""The robot family's declaration: skill selection on MuJoCo's Fetch arm (its fitted Local model and
progress estimate in ``data/local_pickplace.json``) and the raw small-move variant (no fitted model: Local's
general weights; the estimate counts skills, not small moves, so Search's h there is the score)."""

from s1gym.family import Family, Task

FAMILY = Family.here(__name__, tasks=(
    Task("s1/PickPlace-v0", ".env:PickPlaceEnv", model="local_pickplace.json",
         progress_tokens=".tokens:progress_tokens", stall_patience=4),
    Task("s1/PickPlaceRaw-v0", ".env:PickPlaceRawEnv"),
), models={"robot": ".model:RobotModel"})
