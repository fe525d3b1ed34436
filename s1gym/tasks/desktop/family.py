"""The desktop family's declaration: MATE's calculator under Xvfb and its fitted Local model."""

from s1gym.family import Family, Task

FAMILY = Family(
    name="desktop",
    package="s1gym.tasks.desktop",
    doc="A desktop application as a task: MATE's calculator under Xvfb, read over AT-SPI",
    tasks=(
        Task(id="s1/Calculator-v0", entry_point="s1gym.tasks.desktop.calculator:CalculatorEnv",
             model="local_calculator.json"),
    ),
    models={"calculator": "s1gym.tasks.desktop.model:CalculatorModel"},
)
