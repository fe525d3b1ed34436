"""Watching episodes: replay pages, GIFs and job index pages (``s1 replay``).

- :func:`write_page` -- one self-contained HTML page that plays one or two
  trials side by side, on each episode's own clock or step by step
  (:mod:`s1gym.reporting.replay.page`, drawn by :mod:`s1gym.reporting.replay.views`);
- :func:`write_index` -- a job's table with a link to each trial's page;
- :func:`page_gif` -- a GIF of a page, screenshotted in real Chromium through
  Playwright and stitched with Pillow; :func:`frames_gif` stitches folders of
  PNGs (:mod:`s1gym.reporting.replay.gif`).
"""

from __future__ import annotations

from s1gym.reporting.replay.page import ReplayError, Trial, load_trial, page_html, write_page

__all__ = ["ReplayError", "Trial", "load_trial", "page_html", "write_page"]
