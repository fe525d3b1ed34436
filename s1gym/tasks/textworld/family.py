"""The TextWorld family's declaration: s1/TextWorld-v0 with Local's fitted model and progress estimate
(``data/local_textworld.json``)."""

from s1gym.family import Family, Task

FAMILY = Family(
    name="textworld",
    package="s1gym.tasks.textworld",
    doc="TextWorld's own generated games (tw-simple, tw-cooking, tw-treasure_hunter, tw-coin_collector)",
    tasks=(
        Task(
            id="s1/TextWorld-v0",
            entry_point="s1gym.tasks.textworld.env:TextWorldEnv",
            model="local_textworld.json",
            progress_tokens="s1gym.tasks.textworld.tokens:progress_tokens",
        ),
    ),
    models={"textworld": "s1gym.tasks.textworld.model:TextWorldModel"},
)
