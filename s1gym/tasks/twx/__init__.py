"""TextWorldExpress games on one shared JVM: the games as rows (:mod:`.games`: CookingWorld, CoinCollector,
...) played by one env class (:mod:`.env`, TWXEnv) on :mod:`.engine` (generators and game objects in the JVM);
their experts: :mod:`.expert`; what a player sees, read as the features their models weigh: :mod:`.view`,
:mod:`.tokens`."""

from s1gym.tasks.twx.games import GAMES

#: gym id -> entry point (imported when the env is made), one per row of :data:`.games.GAMES`.
TASKS: dict[str, str] = {row.gym_id: f"s1gym.tasks.twx.env:{row.class_name}" for row in GAMES}
