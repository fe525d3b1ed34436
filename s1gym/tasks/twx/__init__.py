"""TextWorldExpress games on one shared JVM: the games as rows (:mod:`.games`: CookingWorld, CoinCollector,
...) played by one env class (:mod:`.env`, TWXEnv) on :mod:`.engine` (generators and game objects in the JVM);
their experts: :mod:`.expert`; what a player sees, read as the features their models weigh: :mod:`.view`,
:mod:`.tokens`; how Local's models of them are fitted (offline commands, never imported by the package):
:mod:`.fit` (``python -m s1gym.tasks.twx.fit``), labelled by the privileged :mod:`.oracle`.

Its declaration (tasks, models, views): :mod:`.family`."""
