"""MiniWoB++ pages in a real Chromium: :mod:`.env` (the gym envs), :mod:`.engine` (a page as a deterministic
engine; ``web_runtime.js`` its clock and input on the page's side; :mod:`.answer` what it gives back),
:mod:`.catalogue` (every page of the package and its formulation), ``web_page.js`` (what a person could do
on the page now), the rule solvers :mod:`.expert` and :mod:`.rules` over :mod:`.view` (what a solver reads),
Local's fitted model :mod:`.model` (its feature names: :mod:`.tokens`; fitted by :mod:`.fit`).

Its declaration (tasks, models, views): :mod:`.family`."""
