"""The TextWorldExpress family's declaration: one task a row of :data:`.games.GAMES`, each with its fitted
Local model and progress estimate (``data/local_<game>.json``) and its stall patience."""

from s1gym.family import Family, Task
from s1gym.tasks.twx.games import GAMES

FAMILY = Family(
    name="twx",
    package="s1gym.tasks.twx",
    doc="TextWorldExpress games on one shared JVM (CookingWorld, CoinCollector, ...)",
    tasks=tuple(
        Task(
            id=row.gym_id,
            entry_point=f"s1gym.tasks.twx.env:{row.class_name}",
            model=row.model_file,
            progress_tokens=row.progress_tokens or "s1gym.tasks.twx.tokens:progress_tokens",
            stall_patience=row.stall_patience,
            weights=row.local_weights,
        )
        for row in GAMES
    ),
    models={"twx": "s1gym.tasks.twx.model:TWXModel"},
)
