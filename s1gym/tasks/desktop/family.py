"""The desktop family's declaration: MATE's calculator under Xvfb, read over AT-SPI, and its fitted Local
model."""

from s1gym.family import Family, Task

FAMILY = Family.here(__name__, tasks=(
    Task("s1/Calculator-v0", ".calculator:CalculatorEnv", model="local_calculator.json"),
), models={"calculator": ".model:CalculatorModel"})
