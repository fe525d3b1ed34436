"""Frames of a robot scene: MuJoCo's offscreen renderer (EGL by default, ``MUJOCO_GL=osmesa`` works too)."""

from __future__ import annotations

import io
import weakref

from s1gym.tasks.robot.arm import Arm
from s1gym.tasks.robot.scene import TABLE_CENTRE, TABLE_TOP

__all__ = ["render_png", "WIDTH", "HEIGHT"]

WIDTH, HEIGHT = 480, 360
#: one renderer per model (a GL context is costly to make), dropped with its model
_renderers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def render_png(arm: Arm) -> bytes:
    """A PNG of the arm's scene, seen from the side of the table."""
    import mujoco
    from PIL import Image

    renderer = _renderers.get(arm.model)
    if renderer is None:
        renderer = _renderers[arm.model] = mujoco.Renderer(arm.model, HEIGHT, WIDTH)
    camera = mujoco.MjvCamera()
    camera.lookat[:] = (TABLE_CENTRE[0] - 0.05, TABLE_CENTRE[1], TABLE_TOP + 0.08)
    camera.distance, camera.azimuth, camera.elevation = 1.15, 150.0, -28.0
    renderer.update_scene(arm.data, camera=camera)
    buf = io.BytesIO()
    Image.fromarray(renderer.render()).save(buf, format="PNG")
    return buf.getvalue()
