"""The card and board games' declaration: Blackjack, 2048 and the Millionaire quiz, their fitted Local
models and their replay views (:mod:`.views`)."""

from s1gym.family import Family, Task

FAMILY = Family(
    name="games",
    package="s1gym.tasks.games",
    doc="Card and board games in plain Python: Blackjack, 2048, the Millionaire quiz",
    tasks=(
        Task(id="s1/Blackjack-v0", entry_point="s1gym.tasks.games.blackjack:BlackjackEnv",
             model="local_blackjack.json", view="s1gym.tasks.games.views:view_blackjack",
             features="s1gym.tasks.games.features:HAND"),
        Task(id="s1/2048-v0", entry_point="s1gym.tasks.games.game2048:Game2048Env",
             model="local_2048.json", stall_patience=6, view="s1gym.tasks.games.views:view_2048",
             features="s1gym.tasks.games.features:BOARD"),
        Task(id="s1/Millionaire-v0", entry_point="s1gym.tasks.games.millionaire:MillionaireEnv",
             view="s1gym.tasks.games.views:view_millionaire"),
    ),
    models={"blackjack": "s1gym.tasks.games.model:BlackjackModel", "2048": "s1gym.tasks.games.model:BoardModel"},
)
