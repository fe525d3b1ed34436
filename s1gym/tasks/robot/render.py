"""Frames of a robot scene: MuJoCo's offscreen rendering on a headless GL context.

The context is EGL (Debian's libegl1 with Mesa's software driver when there is no GPU), or OSMesa when
``MUJOCO_GL=osmesa``. It is made here, not by ``mujoco.Renderer``: that one takes the GL backend mujoco
chose when it was first imported (GLFW, which needs a display, when ``MUJOCO_GL`` was unset then), so a
program that imported mujoco before s1gym could not take a picture.
"""

from __future__ import annotations

import io
import os
import weakref

import numpy as np

from s1gym.engines import lifecycle
from s1gym.tasks.robot.arm import Arm
from s1gym.tasks.robot.scene import TABLE_CENTRE, TABLE_TOP

__all__ = ["HEIGHT", "WIDTH", "render_png"]

WIDTH, HEIGHT = 480, 360
#: one GL context and scene per model (a context is costly to make), dropped with its model
_contexts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Offscreen:
    def __init__(self, model) -> None:
        import mujoco

        if os.environ.get("MUJOCO_GL", "egl").lower() == "osmesa":
            from mujoco.osmesa import GLContext
        else:
            from mujoco.egl import GLContext
        self.gl = GLContext(WIDTH, HEIGHT)       # the first one registers EGL's own exit hook
        lifecycle.exit_before_later_handlers()   # so the contexts are freed (_free_contexts) before it runs
        self.gl.make_current()
        self.scene = mujoco.MjvScene(model, maxgeom=2000)
        self.option = mujoco.MjvOption()
        self.context = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100.value)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self.context)
        self.rect = mujoco.MjrRect(0, 0, WIDTH, HEIGHT)
        self.camera = mujoco.MjvCamera()
        self.camera.lookat[:] = (TABLE_CENTRE[0] - 0.05, TABLE_CENTRE[1], TABLE_TOP + 0.08)
        self.camera.distance, self.camera.azimuth, self.camera.elevation = 1.15, 150.0, -28.0

    def free(self) -> None:
        self.context.free()
        self.gl.free()

    def frame(self, model, data) -> np.ndarray:
        import mujoco

        self.gl.make_current()
        mujoco.mjv_updateScene(model, data, self.option, None, self.camera, mujoco.mjtCatBit.mjCAT_ALL.value,
                               self.scene)
        mujoco.mjr_render(self.rect, self.scene, self.context)
        rgb = np.empty((HEIGHT, WIDTH, 3), dtype=np.uint8)
        mujoco.mjr_readPixels(rgb, None, self.rect, self.context)
        return np.flipud(rgb)                    # GL's rows run bottom up


def _free_contexts() -> None:
    """Free the GL contexts at exit, before mujoco.egl's own exit hook ends EGL (their finalisers fail
    at the interpreter's shutdown): an exit hook of :mod:`s1gym.engines.lifecycle`, whose handler is moved
    ahead of EGL's after each context is made."""
    for offscreen in list(_contexts.values()):
        offscreen.free()
    _contexts.clear()


lifecycle.at_exit("graphics", _free_contexts)


def render_png(arm: Arm) -> bytes:
    """A PNG of the arm's scene, seen from the side of the table."""
    from PIL import Image

    offscreen = _contexts.get(arm.model)
    if offscreen is None:
        offscreen = _contexts[arm.model] = _Offscreen(arm.model)
    buf = io.BytesIO()
    Image.fromarray(offscreen.frame(arm.model, arm.data)).save(buf, format="PNG")
    return buf.getvalue()
