"""A desktop application as a task: MATE's calculator under Xvfb (:mod:`.calculator`) and its goals
(:mod:`.goals`)."""

#: gym id -> entry point (imported when the env is made).
TASKS: dict[str, str] = {
    "s1/Calculator-v0": "s1gym.tasks.desktop.calculator:CalculatorEnv",
}
