"""Labelled-text tasks: route a ticket, guard against a prompt injection (:mod:`.labelled` is their base,
:mod:`.data_files` reads their rows); Local's models of them (:mod:`.model`, fitted by :mod:`.fit`).

Its declaration (tasks, models, views): :mod:`.family`."""
