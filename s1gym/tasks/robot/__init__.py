"""Robot skill selection on MuJoCo physics: the Fetch arm (Gymnasium-Robotics' scene) picking and placing
blocks, with skills (:mod:`.skills`) or small moves as candidates. Scenes: :mod:`.scene`; physics and
control: :mod:`.arm`; text: :mod:`.view`; experts: :mod:`.expert`; the envs: :mod:`.env`."""

#: gym id -> entry point (imported when the env is made).
TASKS: dict[str, str] = {
    "s1/PickPlace-v0": "s1gym.tasks.robot.env:PickPlaceEnv",
    "s1/PickPlaceRaw-v0": "s1gym.tasks.robot.env:PickPlaceRawEnv",
}
