"""ALFWorld's declaration: the text games, Local's pair model and its progress estimate
(``data/local_alfworld.json``)."""

from s1gym.family import Family, Task

FAMILY = Family(
    name="alfworld",
    package="s1gym.tasks.alfworld",
    doc="ALFWorld's text games on the real ALFWorld engine",
    tasks=(
        Task(
            id="s1/ALFWorld-v0",
            entry_point="s1gym.tasks.alfworld.env:ALFWorldEnv",
            model="local_alfworld.json",
            progress_tokens="s1gym.tasks.alfworld.goals:context_tokens",
            stall_patience=8,
        ),
    ),
    models={"alfworld": "s1gym.tasks.alfworld.model:ALFWorldModel"},
)
