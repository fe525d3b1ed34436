"""The BabyAI family: minigrid's BabyAI levels as text (``s1/BabyAI-v0``), read by :mod:`.family`."""
