"""``python -m s1gym`` is the ``s1`` command."""

from s1gym.ui.cli import main

raise SystemExit(main())
