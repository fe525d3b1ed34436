"""The labelled-text tasks' declaration: route a ticket, guard against a prompt injection, each with its
fitted Local model."""

from s1gym.family import Family, Task

FAMILY = Family(
    name="text",
    package="s1gym.tasks.text",
    doc="Labelled-text tasks: route a ticket, guard against a prompt injection",
    tasks=(
        Task(id="s1/TicketRouter-v0", entry_point="s1gym.tasks.text.tickets:TicketRouterEnv",
             model="local_tickets.json"),
        Task(id="s1/InjectionGuard-v0", entry_point="s1gym.tasks.text.injection:InjectionGuardEnv",
             model="local_injection.json"),
    ),
    models={"tickets": "s1gym.tasks.text.model:TicketsModel", "injection": "s1gym.tasks.text.model:InjectionModel"},
)
