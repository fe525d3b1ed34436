"""What a player sees, read for models and estimates (below tasks and policies): :mod:`.twx_view` and
:mod:`.twx_tokens` for the TextWorldExpress games."""
