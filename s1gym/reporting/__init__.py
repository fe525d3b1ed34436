"""Reading job folders back: tables (:mod:`.table`), plots (:mod:`.plots`) and replays (:mod:`.replay`)."""
