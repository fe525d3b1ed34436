"""The TextWorldExpress family's declaration: one task a row of :data:`.games.GAMES`, each with its fitted
Local model and progress estimate (``data/local_<game>.json``) and its stall patience."""

from s1gym.family import Family, Task
from s1gym.tasks.twx.games import GAMES

FAMILY = Family.here(__name__, tasks=tuple(
    Task(row.gym_id, f".env:{row.class_name}", model=row.model_file,
         progress_tokens=row.progress_tokens or ".tokens:progress_tokens", stall_patience=row.stall_patience,
         gain_patience=row.gain_patience, weights=row.local_weights)
    for row in GAMES
), models={"twx": ".model:TWXModel"})
