"""The BabyAI family's declaration: one task, ``s1/BabyAI-v0``, over minigrid's BabyAI levels, with its
fitted Local model and progress estimate (``data/local_babyai.json``)."""

from s1gym.family import Family, Task

FAMILY = Family(
    name="babyai",
    package="s1gym.tasks.babyai",
    doc="minigrid's BabyAI levels as text: a mission, the agent's 7x7 view, the seven actions (pip install "
        "s1gym[babyai])",
    tasks=(
        Task(
            id="s1/BabyAI-v0",
            entry_point="s1gym.tasks.babyai.env:BabyAIEnv",
            # Local's fitted model and Search's progress estimate, written by python -m s1gym.tasks.babyai.fit
            model="local_babyai.json",
            progress_tokens="s1gym.tasks.babyai.tokens:progress_tokens",
        ),
    ),
    models={"babyai": "s1gym.tasks.babyai.model:BabyAIModel"},
)
