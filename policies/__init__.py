"""Decision models (``s1gym.policies``)."""
