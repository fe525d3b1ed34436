"""MiniWoB++ pages in a real Chromium: :mod:`.env`, the scripted solvers :mod:`.expert`, and
``web_page.js`` (what a person could do on the page now)."""

#: gym id -> entry point (imported when the env is made).
TASKS: dict[str, str] = {
    "s1/MiniWoB-v0": "s1gym.tasks.web.env:MiniWoBEnv",
    "s1/Flights-v0": "s1gym.tasks.web.env:FlightsEnv",
}
