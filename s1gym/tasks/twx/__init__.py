"""TextWorldExpress games on one shared JVM: :mod:`.games` (CookingWorld, CoinCollector, ...) on the base
:mod:`.env` (TWXEnv) and :mod:`.engine` (generators and game objects in the JVM); their experts: :mod:`.expert`."""

#: gym id -> entry point (imported when the env is made).
TASKS: dict[str, str] = {
    "s1/CookingWorld-v0": "s1gym.tasks.twx.games:CookingWorldEnv",
    "s1/CoinCollector-v0": "s1gym.tasks.twx.games:CoinCollectorEnv",
    "s1/TWC-v0": "s1gym.tasks.twx.games:TWCEnv",
    "s1/MapReader-v0": "s1gym.tasks.twx.games:MapReaderEnv",
    "s1/Arithmetic-v0": "s1gym.tasks.twx.games:ArithmeticEnv",
    "s1/Sorting-v0": "s1gym.tasks.twx.games:SortingEnv",
    "s1/SimonSays-v0": "s1gym.tasks.twx.games:SimonSaysEnv",
    "s1/PeckingOrder-v0": "s1gym.tasks.twx.games:PeckingOrderEnv",
}
