"""DRRN on CookingWorld: a Q-network that scores each (state, candidate move) pair, in one file.

In choice-based text games the list of moves changes every step (CookingWorld lists 10-60 of them:
"take red apple", "open fridge", ...), so an action index means nothing by itself and a fixed output
layer over indices cannot learn. The Deep Reinforcement Relevance Network (He et al., "Deep
Reinforcement Learning with a Natural Language Action Space", ACL 2016) encodes the state text and
each candidate text with two separate networks and scores the pair by the inner product of the two
embeddings: Q(s, a) = f(s) . g(a). It is trained by Q-learning with experience replay, and it is the
standard baseline for choice-based text games (Jericho, TextWorld, TextWorldExpress).

This file follows He et al.'s architecture (bags of words in, two tanh layers per side, inner
product) with the hashing trick in place of a vocabulary (s1gym.rl.HashedBagOfWords, so unseen games
need no re-fitting) and CleanRL's DQN loop (Huang et al., JMLR 2022): Gymnasium vector envs,
epsilon-greedy exploration with a linear schedule, a target network, Huber loss; and, as Hausknecht et
al.'s DRRN for Jericho (AAAI 2020) does, half of each replayed batch from the transitions that scored. Training games come
from the train fold, evaluation games from the test fold (unseen games, greedy play).

Run:  python examples/drrn_cookingworld.py --size small --total-steps 20000
      python examples/drrn_cookingworld.py --total-steps 2000 --eval-every 1000 --eval-games 3   # a smoke run
It prints one JSON line per evaluation (steps, mean score and solve rate on the test games).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import deque
from dataclasses import asdict, dataclass
from functools import lru_cache

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import s1gym  # noqa: F401  (registers the s1/ envs)
from s1gym.rl import HashedBagOfWords


@dataclass
class Args:
    size: str = "small"  # CookingWorld size: small, medium, large
    seed: int = 1
    total_steps: int = 20_000  # environment steps (all vector envs together)
    num_envs: int = 4
    buckets: int = 4096  # hashed bag-of-words width
    hidden: int = 128
    learning_rate: float = 1e-3
    gamma: float = 0.9
    buffer_size: int = 50_000
    batch_size: int = 64
    learning_starts: int = 1_000
    train_every: int = 1  # gradient steps after every vector step
    target_every: int = 100  # gradient steps between target-network copies
    priority_fraction: float = 0.5  # share of each batch drawn from transitions that scored
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    exploration_fraction: float = 0.5  # share of total_steps over which epsilon falls
    eval_every: int = 2_000
    eval_games: int = 20  # test-fold games 0..eval_games-1
    threads: int = 1


# ---------------------------------------------------------------------------------------------- texts
# The state is the whole observation (the task, what is visible, the inventory, the moves listed);
# each candidate is its own text. Both become bags of hashed words and bigrams: the sparse form that
# nn.EmbeddingBag consumes (an EmbeddingBag with weights is a linear layer over a sparse vector).


class Bags:
    """Hashes texts into (ids, offsets, weights) batches for nn.EmbeddingBag, caching each paragraph.

    A state's paragraphs (the task, the last feedback, the room, the inventory, the recipe once read)
    are bagged separately, each scaled to unit length, and then summed: a one-line change such as a new
    item in the inventory weighs as much as the long room description (Hausknecht et al. 2020 encode
    observation, look and inventory separately for the same reason). The closing "Moves:" paragraph is
    dropped: each candidate is scored on its own.
    """

    def __init__(self, buckets: int) -> None:
        self.encoder = HashedBagOfWords(dim=buckets)
        self.paragraph = lru_cache(maxsize=200_000)(self.encoder.ids)

    def ids(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        rows = [self.paragraph(p) for p in text.split("\n\n") if p and not p.startswith("Moves: ")]
        return np.concatenate([r[0] for r in rows]), np.concatenate([r[1] for r in rows])

    def __call__(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        rows = [self.ids(t) for t in texts]
        lengths = [len(ids) for ids, _ in rows]
        offsets = torch.tensor(np.concatenate([[0], np.cumsum(lengths)[:-1]]), dtype=torch.long)
        ids = torch.from_numpy(np.concatenate([ids for ids, _ in rows])).long()
        weights = torch.from_numpy(np.concatenate([w for _, w in rows])).float()
        return ids, offsets, weights


# --------------------------------------------------------------------------------------------- network
class DRRN(nn.Module):
    """Q(s, a) = f(s) . g(a): two bag-of-words towers, each a linear map and two tanh layers."""

    def __init__(self, buckets: int, hidden: int) -> None:
        super().__init__()
        self.words = nn.EmbeddingBag(buckets, hidden, mode="sum")  # shared: "pork chop" in the recipe and in "take pork chop"
        self.state_out = nn.Sequential(nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.action_out = nn.Sequential(nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())

    def forward(self, states, actions, counts: torch.Tensor) -> torch.Tensor:
        """Q of every candidate, flat: state j's ``counts[j]`` candidates follow each other."""
        s = self.state_out(self.words(*states[:2], per_sample_weights=states[2]))
        a = self.action_out(self.words(*actions[:2], per_sample_weights=actions[2]))
        return (s.repeat_interleave(counts, dim=0) * a).sum(dim=1)


def q_values(net: DRRN, bags: Bags, states: list[str], candidates: list[list[str]]) -> list[torch.Tensor]:
    """One tensor of Q values per state, over that state's candidates."""
    if not states:
        return []
    counts = torch.tensor([len(c) for c in candidates])
    flat = net(bags(states), bags([c for cs in candidates for c in cs]), counts)
    return list(torch.split(flat, counts.tolist()))


# -------------------------------------------------------------------------------------- replay memory
@dataclass
class Transition:
    state: str
    candidates: list[str]
    action: int  # index into candidates
    reward: float
    next_state: str
    next_candidates: list[str]  # empty when the game ended
    terminal: bool  # won or lost (a step-limit truncation still bootstraps)


# ----------------------------------------------------------------------------------------- evaluation
def evaluate(net: DRRN, bags: Bags, args: Args) -> dict[str, float]:
    """Greedy play on test-fold games 0..eval_games-1 (games the agent never trained on)."""
    env = gym.make("s1/CookingWorld-v0", size=args.size, fold="test")
    scores, wins = [], 0
    with torch.no_grad():
        for game in range(args.eval_games):
            obs, info = env.reset(seed=game)
            done = False
            while not done:
                (q,) = q_values(net, bags, [obs], [info["candidates"]])
                obs, _, terminated, truncated, info = env.step(int(q.argmax()))
                done = terminated or truncated
            scores.append(info["score"])
            wins += int(info["won"])
    env.close()
    return {"score": float(np.mean(scores)), "solved": wins / args.eval_games}


# ------------------------------------------------------------------------------------------- training
def train(args: Args, log=print) -> list[dict]:
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    # Vector envs over train-fold games; Gymnasium 1.x autoresets on the step *after* an episode ends
    # (that step ignores the action, and the game-over mask of all ones lets any action through).
    envs = gym.make_vec(
        "s1/CookingWorld-v0", num_envs=args.num_envs, vectorization_mode="sync", size=args.size, fold="train"
    )
    bags = Bags(args.buckets)
    net, target = DRRN(args.buckets, args.hidden), DRRN(args.buckets, args.hidden)
    target.load_state_dict(net.state_dict())
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, foreach=True)
    # Two replay memories, as in Hausknecht et al.'s DRRN for Jericho (AAAI 2020): transitions that scored
    # and the rest; each batch takes priority_fraction of its transitions from the first, so the few
    # rewarding moves are replayed often enough for their value to spread back along the plan.
    scored: deque[Transition] = deque(maxlen=args.buffer_size)
    memory: deque[Transition] = deque(maxlen=args.buffer_size)
    rng = np.random.default_rng(args.seed)

    history = []
    finished: deque[float] = deque(maxlen=50)  # scores of the last training episodes
    obs, infos = envs.reset(seed=args.seed)
    restarting = np.zeros(args.num_envs, dtype=bool)  # this step is an autoreset step
    steps = updates = 0
    started = time.perf_counter()
    while steps < args.total_steps:
        # 1. act: epsilon-greedy over each env's candidates
        fraction = min(1.0, steps / (args.exploration_fraction * args.total_steps))
        epsilon = args.epsilon_start + fraction * (args.epsilon_end - args.epsilon_start)
        candidates = [list(c) for c in infos["candidates"]]
        with torch.no_grad():
            live = [i for i in range(args.num_envs) if candidates[i]]
            greedy = dict(zip(live, q_values(net, bags, [obs[i] for i in live], [candidates[i] for i in live])))
        actions = np.zeros(args.num_envs, dtype=np.int64)
        for i in live:
            explore = rng.random() < epsilon
            actions[i] = rng.integers(len(candidates[i])) if explore else int(greedy[i].argmax())

        # 2. step every env and remember the transitions (not the autoreset steps)
        next_obs, rewards, terminated, truncated, next_infos = envs.step(actions)
        for i in live:
            if restarting[i]:
                continue
            (scored if rewards[i] > 0 else memory).append(
                Transition(
                    obs[i], candidates[i], int(actions[i]), float(rewards[i]), next_obs[i],
                    [] if terminated[i] else list(next_infos["candidates"][i]), bool(terminated[i]),
                )
            )
        restarting = terminated | truncated
        finished.extend(float(next_infos["score"][i]) for i in np.flatnonzero(restarting))
        obs, infos = next_obs, next_infos
        steps += args.num_envs

        # 3. learn: one Q-learning step on a replayed batch, target y = r + gamma * max_a' Q_target(s', a')
        if len(memory) + len(scored) >= args.learning_starts and steps % (args.train_every * args.num_envs) == 0:
            k = min(len(scored), int(args.priority_fraction * args.batch_size))
            batch = [scored[j] for j in rng.integers(len(scored), size=k)]
            batch += [memory[j] for j in rng.integers(len(memory), size=args.batch_size - k)]
            with torch.no_grad():
                going_on = [b for b in batch if b.next_candidates]  # a finished game has no next move
                next_q = q_values(target, bags, [b.next_state for b in going_on], [b.next_candidates for b in going_on])
                best = iter([float(q.max()) for q in next_q])
                y = torch.tensor([b.reward + (args.gamma * next(best) if b.next_candidates else 0.0) for b in batch])
            q = q_values(net, bags, [b.state for b in batch], [b.candidates for b in batch])
            chosen = torch.stack([qs[b.action] for qs, b in zip(q, batch)])
            loss = F.smooth_l1_loss(chosen, y)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 10.0)
            optimizer.step()
            updates += 1
            if updates % args.target_every == 0:
                target.load_state_dict(net.state_dict())

        # 4. evaluate on unseen games now and then
        if steps // args.eval_every > (steps - args.num_envs) // args.eval_every or steps >= args.total_steps:
            train_score = round(float(np.mean(finished)), 3) if finished else None
            row = {"steps": steps, **evaluate(net, bags, args), "train_score": train_score, "epsilon": round(epsilon, 3),
                   "seconds": round(time.perf_counter() - started, 1)}
            history.append(row)
            log(json.dumps(row))
    envs.close()
    return history


def parse(argv: list[str] | None = None) -> Args:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in asdict(Args()).items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    return Args(**vars(parser.parse_args(argv)))


if __name__ == "__main__":
    train(parse())
