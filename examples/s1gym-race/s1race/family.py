"""The race family's declaration: what s1gym reads about it, without importing its env.

s1gym finds this object through the package's entry point (pyproject.toml)::

    [project.entry-points."s1gym.families"]
    race = "s1race.family:FAMILY"

Every ``"module:attr"`` string is imported on first use, so listing the family loads no game code.
"""

from s1gym.family import Family, Task

FAMILY = Family(
    name="race",
    package="s1race",
    doc="Race to N in plain Python (an example family in its own package): a chance-free Nim variant "
        "against a house with a stated rule",
    tasks=(
        Task(
            id="s1race/Race-v0",
            entry_point="s1race.race:RaceEnv",
            # Local's fitted model, a file in s1race/data/ written by `python -m s1race.fit`
            model="local_race.json",
            # the replay's picture of a position (s1 replay)
            view="s1race.views:view_race",
        ),
    ),
    # a model file's "kind" -> the class that reads it (s1gym.registration.load_model)
    models={"race": "s1race.model:RaceModel"},
)
