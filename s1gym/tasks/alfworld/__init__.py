"""ALFWorld's text games on the real ALFWorld engine: :mod:`.env` (the env and its snapshot engine),
:mod:`.expert` (alfworld's handcoded expert and Fast Downward's planner)."""

#: gym id -> entry point (imported when the env is made).
TASKS: dict[str, str] = {
    "s1/ALFWorld-v0": "s1gym.tasks.alfworld.env:ALFWorldEnv",
}
