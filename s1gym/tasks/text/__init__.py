"""Labelled-text tasks: route a ticket, guard against a prompt injection (:mod:`.labelled` is their base)."""

#: gym id -> entry point (imported when the env is made).
TASKS: dict[str, str] = {
    "s1/TicketRouter-v0": "s1gym.tasks.text.tickets:TicketRouterEnv",
    "s1/InjectionGuard-v0": "s1gym.tasks.text.injection:InjectionGuardEnv",
}
