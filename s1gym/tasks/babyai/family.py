"""The BabyAI family's declaration: one task, ``s1/BabyAI-v0``, over minigrid's BabyAI levels, with its
fitted Local model and progress estimate (``data/local_babyai.json``) and its replay view (:mod:`.views`: the
map as the player has seen it)."""

from s1gym.family import Family, Task

# Local's fitted model and Search's progress estimate: data/local_babyai.json (python -m s1gym.tasks.babyai.fit)
FAMILY = Family.here(__name__, tasks=(
    Task("s1/BabyAI-v0", ".env:BabyAIEnv", model="local_babyai.json", progress_tokens=".tokens:progress_tokens",
         view=".views:view_babyai"),
), models={"babyai": ".model:BabyAIModel"})
