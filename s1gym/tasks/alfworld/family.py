"""ALFWorld's declaration: the text games, Local's pair model and its progress estimate
(``data/local_alfworld.json``)."""

from s1gym.family import Family, Task

FAMILY = Family.here(__name__, tasks=(
    Task("s1/ALFWorld-v0", ".env:ALFWorldEnv", model="local_alfworld.json", progress_tokens=".goals:context_tokens",
         stall_patience=8),
), models={"alfworld": ".model:ALFWorldModel"})
