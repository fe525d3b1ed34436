"""Robot skill selection on MuJoCo physics: the Fetch arm (Gymnasium-Robotics' scene) picking and placing
blocks, with skills (:mod:`.skills`) or small moves as candidates. Scenes: :mod:`.scene`; physics and
control: :mod:`.arm`; text: :mod:`.view`; experts: :mod:`.expert`; the envs: :mod:`.env`; Local's fitted
model and Search's progress estimate: :mod:`.model` (feature names: :mod:`.tokens`; fitted by :mod:`.fit`).

Its declaration (tasks, models, views): :mod:`.family`."""
