"""The robot family's declaration: skill selection on MuJoCo's Fetch arm (its fitted Local model and
progress estimate in ``data/local_pickplace.json``) and the raw small-move variant."""

from s1gym.family import Family, Task

FAMILY = Family(
    name="robot",
    package="s1gym.tasks.robot",
    doc="Robot skill selection on MuJoCo physics: the Fetch arm picking and placing blocks",
    tasks=(
        Task(id="s1/PickPlace-v0", entry_point="s1gym.tasks.robot.env:PickPlaceEnv", model="local_pickplace.json",
             progress_tokens="s1gym.tasks.robot.tokens:progress_tokens", stall_patience=4),
        # no fitted model (Local's general weights); the estimate counts skills, not small moves
        Task(id="s1/PickPlaceRaw-v0", entry_point="s1gym.tasks.robot.env:PickPlaceRawEnv"),
    ),
    models={"robot": "s1gym.tasks.robot.model:RobotModel"},
)
