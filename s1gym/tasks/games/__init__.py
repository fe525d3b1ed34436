"""Card and board games in plain Python: Blackjack, 2048 (its packed board and move tables:
:mod:`.board2048`; its tile-spawn random stream: :mod:`.pcg32`), the Millionaire quiz (its question bank:
:mod:`.trivia`); Local's models of them (:mod:`.model`, fitted by :mod:`.fit`) and the replay's views
(:mod:`.views`).

Its declaration (tasks, models, views): :mod:`.family`."""
