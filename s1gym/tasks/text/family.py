"""The labelled-text tasks' declaration: route a ticket, guard against a prompt injection, each with its
fitted Local model."""

from s1gym.family import Family, Task

FAMILY = Family.here(__name__, tasks=(
    Task("s1/TicketRouter-v0", ".tickets:TicketRouterEnv", model="local_tickets.json"),
    Task("s1/InjectionGuard-v0", ".injection:InjectionGuardEnv", model="local_injection.json"),
), models={"tickets": ".model:TicketsModel", "injection": ".model:InjectionModel"})
