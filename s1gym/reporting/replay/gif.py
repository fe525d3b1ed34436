"""GIFs of replays: a page screenshotted in real Chromium per frame, or folders of PNGs, stitched by Pillow.

:func:`page_gif` opens a replay page in headless Chromium (Debian's
``chromium`` driven by Playwright; Playwright's own browser download is not
needed), asks the page for its frame schedule (``replay.schedule``: which
positions to show and for how long, in the page's mode and speed), shows each
position, screenshots the stage and stitches the GIF. :func:`frames_gif` does
the same for folders of PNGs (e.g. the ``agent/frames`` of ``s1 run --frames``),
side by side when given two.

Bounds: at most ``max_frames`` frames (positions are thinned evenly past it;
each frame's duration grows to keep the timing) and at most ``width`` pixels
wide (scaled down, aspect kept). Durations are whole centiseconds (GIF's
unit), at least 20 ms (browsers slow shorter frames down to 100 ms).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from s1gym.reporting.replay.page import shown_ticks
from s1gym.engines import browser as _browser

__all__ = [
    "DEFAULT_MAX_FRAMES",
    "DEFAULT_WIDTH",
    "chromium_page",
    "frames_gif",
    "page_gif",
    "page_picture",
    "stitch_gif",
]

#: Frames a GIF holds at most by default.
DEFAULT_MAX_FRAMES = 150
#: Widest GIF by default, in pixels (a two-panel page is about 1210 px wide; it is scaled down).
DEFAULT_WIDTH = 960
#: Shortest frame duration, ms (browsers show shorter GIF frames for 100 ms).
MIN_FRAME_MS = 20
#: How long the last frame stays, ms.
HOLD_MS = 2000


@contextlib.contextmanager
def chromium_page(width: int = 1280, height: int = 800) -> Iterator[Any]:
    """A Playwright page of the given size in a fresh browser context of this thread's headless
    Chromium (the one the web tasks use: :mod:`s1gym.engines.browser`, which finds Chromium, shares the
    thread's Playwright driver and names the install command when something is missing)."""
    with _browser.holding(headless=True) as browser:
        context, page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
        try:
            yield page
        finally:
            with contextlib.suppress(Exception):
                context.close()


#: The page's width (right edge of the last panel) and height, in CSS pixels.
FIT_SCRIPT = """() => {
  const right = Math.max(...[...document.querySelectorAll('.panel')].map(p => p.getBoundingClientRect().right));
  return [Math.ceil(right + 16), Math.ceil(document.documentElement.scrollHeight)];
}"""


def _durations(ms: Sequence[float]) -> list[int]:
    """GIF durations: whole centiseconds, at least :data:`MIN_FRAME_MS`, carrying rounding forward."""
    out, debt = [], 0.0
    for m in ms:
        want = m + debt
        got = max(MIN_FRAME_MS, int(round(want / 10.0)) * 10)
        debt = want - got
        out.append(got)
    return out


def stitch_gif(images: Sequence[Any], durations_ms: Sequence[float], path: Path, width: int = DEFAULT_WIDTH) -> Path:
    """Write ``images`` (Pillow images of one size) as a looping GIF, scaled to at most ``width`` px."""
    from PIL import Image

    if not images:
        raise ValueError("a GIF needs at least one frame")
    if len(images) != len(durations_ms):
        raise ValueError(f"{len(images)} frames but {len(durations_ms)} durations")
    scaled = []
    for im in images:
        im = im.convert("RGB")
        if im.width > width:
            im = im.resize((width, max(1, round(im.height * width / im.width))), Image.Resampling.LANCZOS)
        scaled.append(im)
    palette = _shared_palette(scaled)
    frames: list[Any] = []
    ms: list[float] = []
    previous = None
    for im, duration in zip(scaled, durations_ms, strict=True):
        frame = im.quantize(palette=palette, dither=Image.Dither.NONE)
        pixels = frame.convert("RGB").tobytes()
        if pixels == previous:  # an unchanged picture: the frame before stays up longer
            ms[-1] += duration
            continue
        previous = pixels
        frames.append(frame)
        ms.append(duration)
    path.parent.mkdir(parents=True, exist_ok=True)
    frames[0].save(
        path, save_all=True, append_images=frames[1:], duration=_durations(ms), loop=0, optimize=True, disposal=1
    )
    return path


def _shared_palette(images: Sequence[Any], samples: int = 12) -> Any:
    """One 256-colour palette for every frame (from up to ``samples`` frames spread over the GIF): with
    one palette, the GIF encoder stores only the part of each frame that changed."""
    from PIL import Image

    picks = sorted({round(i * (len(images) - 1) / max(1, samples - 1)) for i in range(min(samples, len(images)))})
    w, h = images[0].size
    mosaic = Image.new("RGB", (w, h * len(picks)))
    for k, i in enumerate(picks):
        mosaic.paste(images[i].resize((w, h)) if images[i].size != (w, h) else images[i], (0, h * k))
    return mosaic.quantize(colors=255, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)


def page_gif(
    page_path: Path,
    gif_path: Path,
    *,
    max_frames: int = DEFAULT_MAX_FRAMES,
    width: int = DEFAULT_WIDTH,
    hold_ms: int = HOLD_MS,
    page: Any = None,
) -> dict[str, Any]:
    """A GIF of a replay page, screenshotted in Chromium; returns ``{path, frames, size}``.

    ``page``: a Playwright page to use (e.g. from :func:`chromium_page`, to make many GIFs with one
    browser); by default a browser is started for this GIF.
    """
    if page is None:
        with chromium_page() as own:
            return page_gif(page_path, gif_path, max_frames=max_frames, width=width, hold_ms=hold_ms, page=own)
    import io

    from PIL import Image

    images = []
    _open_fitted(page, page_path)
    plan = page.evaluate("([n, hold]) => window.replay.schedule(n, hold)", [max_frames, hold_ms])
    for position, _ms in plan:
        page.evaluate("p => window.replay.show(p)", position)
        images.append(Image.open(io.BytesIO(page.screenshot(type="png", animations="disabled", caret="hide"))))
    stitch_gif(images, [ms for _, ms in plan], gif_path, width)
    with Image.open(gif_path) as gif:
        return {"path": gif_path, "frames": gif.n_frames, "size": gif.size}


def _open_fitted(page: Any, page_path: Path) -> None:
    """Open a replay page with a viewport the size of its panels and controls (so every frame of a GIF
    has that size)."""
    page.goto(Path(page_path).resolve().as_uri())
    page.wait_for_function("() => window.replay !== undefined")
    for _ in range(2):  # the height follows the width
        size = page.evaluate(FIT_SCRIPT)
        page.set_viewport_size({"width": size[0], "height": size[1]})


def page_picture(page_path: Path, png_path: Path, position: float, *, mode: str | None = None, page: Any = None) -> Path:
    """A PNG of a replay page at ``position`` (a decision index in step mode, seconds in time mode)."""
    if page is None:
        with chromium_page() as own:
            return page_picture(page_path, png_path, position, mode=mode, page=own)
    _open_fitted(page, page_path)
    if mode is not None:
        page.evaluate("m => window.replay.setMode(m)", mode)
    page.evaluate("p => window.replay.show(p)", position)
    png_path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(png_path), type="png", animations="disabled", caret="hide")
    return png_path


def frames_gif(
    folders: Sequence[Path],
    gif_path: Path,
    *,
    fps: float = 4.0,
    max_frames: int = DEFAULT_MAX_FRAMES,
    width: int = DEFAULT_WIDTH,
    hold_ms: int = HOLD_MS,
) -> dict[str, Any]:
    """A GIF of one or two folders of PNGs (sorted by name), side by side; the shorter folder holds its
    last frame. Returns ``{path, frames, size}``."""
    from PIL import Image

    if not 1 <= len(folders) <= 2:
        raise ValueError(f"--from-frames takes one or two folders of PNGs, not {len(folders)}")
    lists = []
    for folder in folders:
        folder = Path(folder)
        files = sorted(folder.glob("*.png")) if folder.is_dir() else []
        if not files:
            raise ValueError(f"{folder}: no PNG files there; pass folders of PNGs (e.g. <trial>/agent/frames)")
        lists.append(files)
    n = max(len(f) for f in lists)
    picks = shown_ticks(n, max(1, max_frames))
    images = []
    for k in picks:
        parts = [Image.open(files[min(k, len(files) - 1)]).convert("RGB") for files in lists]
        gap = 12
        canvas = Image.new("RGB", (sum(p.width for p in parts) + gap * (len(parts) - 1), max(p.height for p in parts)), "white")
        x = 0
        for p in parts:
            canvas.paste(p, (x, 0))
            x += p.width + gap
        images.append(canvas)
    ms = [1000.0 * (b - a) / fps for a, b in zip(picks, picks[1:])] + [hold_ms]
    stitch_gif(images, ms, gif_path, width)
    with Image.open(gif_path) as gif:
        return {"path": gif_path, "frames": gif.n_frames, "size": gif.size}
