"""TextWorldExpress games (CookingWorld, CoinCollector, ...) on one shared JVM: :mod:`.env`; their experts:
:mod:`.expert`."""

#: gym id -> entry point (imported when the env is made).
TASKS: dict[str, str] = {
    "s1/CookingWorld-v0": "s1gym.tasks.twx.env:CookingWorldEnv",
    "s1/CoinCollector-v0": "s1gym.tasks.twx.env:CoinCollectorEnv",
    "s1/TWC-v0": "s1gym.tasks.twx.env:TWCEnv",
    "s1/MapReader-v0": "s1gym.tasks.twx.env:MapReaderEnv",
    "s1/Arithmetic-v0": "s1gym.tasks.twx.env:ArithmeticEnv",
    "s1/Sorting-v0": "s1gym.tasks.twx.env:SortingEnv",
    "s1/SimonSays-v0": "s1gym.tasks.twx.env:SimonSaysEnv",
    "s1/PeckingOrder-v0": "s1gym.tasks.twx.env:PeckingOrderEnv",
}
