"""Card and board games in plain Python: Blackjack, 2048, the Millionaire quiz."""

#: gym id -> entry point (imported when the env is made).
TASKS: dict[str, str] = {
    "s1/Blackjack-v0": "s1gym.tasks.games.blackjack:BlackjackEnv",
    "s1/2048-v0": "s1gym.tasks.games.game2048:Game2048Env",
    "s1/Millionaire-v0": "s1gym.tasks.games.millionaire:MillionaireEnv",
}
