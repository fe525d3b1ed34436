"""The TextWorld family's declaration: s1/TextWorld-v0 with Local's fitted model and progress estimate
(``data/local_textworld.json``)."""

from s1gym.family import Family, Task

# Local's fitted model and Search's progress estimate: data/local_textworld.json (python -m s1gym.tasks.textworld.fit)
FAMILY = Family.here(__name__, tasks=(
    Task("s1/TextWorld-v0", ".env:TextWorldEnv", model="local_textworld.json", progress_tokens=".tokens:progress_tokens"),
), models={"textworld": ".model:TextWorldModel"})
