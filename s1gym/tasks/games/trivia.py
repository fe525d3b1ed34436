"""Millionaire's question bank: multiple-choice questions in Open Trivia DB's fields, and the fetch that fills
a local cache with more.

The family ships 36 questions (``data/trivia.jsonl``, read through :meth:`s1gym.family.Family.data`, so it
works from a wheel too). More come from the Open Trivia DB API with :func:`fetch_opentdb`, which appends
to a local cache (``python -m s1gym.tasks.games.trivia fetch --amount 200``); nothing is downloaded at run
time. Loaded banks are cached by (path, modification time) (:func:`s1gym.datasets.file_key`).
"""

from __future__ import annotations

import html
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from s1gym.checks import positive_int
from s1gym.datasets import DataError, cache_root, file_key, read_rows, require

__all__ = ["DIFFICULTIES", "TriviaQuestion", "default_trivia_cache", "fetch_opentdb", "load_trivia"]

DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")
OPENTDB_URL = "https://opentdb.com"


@dataclass(frozen=True)
class TriviaQuestion:
    """One multiple-choice question, HTML entities already unescaped."""

    question: str
    correct_answer: str
    incorrect_answers: tuple[str, str, str]
    difficulty: str
    category: str

    @property
    def answers(self) -> tuple[str, ...]:
        return (self.correct_answer, *self.incorrect_answers)

    def texts(self) -> tuple[str, ...]:
        return (self.question, self.category, *self.answers)

def default_trivia_cache() -> Path:
    """Where :func:`fetch_opentdb` keeps fetched questions: in :func:`s1gym.datasets.cache_root`."""
    return cache_root() / "opentdb_multiple.jsonl"


def load_trivia(path: str | os.PathLike[str], *, what: str = "questions") -> tuple[TriviaQuestion, ...]:
    """Multiple-choice questions from JSONL in Open Trivia DB's fields.

    Fields: ``question``, ``correct_answer``, ``incorrect_answers`` (3 strings),
    ``difficulty`` (easy | medium | hard), ``category`` (optional), ``type``
    (optional, must be ``multiple``). HTML entities (``&quot;`` ...), the API's
    default encoding, are unescaped here once, so nothing downstream sees them.
    """
    return _load_trivia(file_key(path), what)


@lru_cache(maxsize=8)
def _load_trivia(key: tuple[str, int], what: str) -> tuple[TriviaQuestion, ...]:
    path = Path(key[0])
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        raise DataError(
            f"{what}: {path} must be JSONL in Open Trivia DB's fields (one question object a line)"
        )
    rows, columns = read_rows(path, what=what)
    out = []
    for number, row in enumerate(rows, 1):

        def field(name: str, row: Mapping[str, Any] = row, number: int = number) -> Any:
            return require(row, name, number, path, columns, what)

        where = f"{what}: {path} line {number}"
        kind = row.get("type", "multiple")
        if kind != "multiple":
            raise DataError(
                f"{where} has type {kind!r}; only 'multiple' (four answers) questions fit a ladder"
            )
        difficulty = str(field("difficulty")).strip().lower()
        if difficulty not in DIFFICULTIES:
            raise DataError(
                f"{where} has unknown difficulty {field('difficulty')!r}; allowed: {list(DIFFICULTIES)}"
            )
        wrong = field("incorrect_answers")
        if not isinstance(wrong, list) or len(wrong) != 3 or not all(isinstance(w, str) for w in wrong):
            raise DataError(f"{where}: incorrect_answers must be a list of exactly 3 strings, got {wrong!r}")
        answers = [html.unescape(str(a)).strip() for a in (field("correct_answer"), *wrong)]
        if any(not a for a in answers) or len(set(answers)) != 4:
            raise DataError(f"{where}: the four answers must be distinct and non-empty, got {answers}")
        question = html.unescape(str(field("question"))).strip()
        if not question:
            raise DataError(f"{where}: the question is empty")
        category = html.unescape(str(row.get("category") or "General knowledge")).strip()
        out.append(
            TriviaQuestion(question, answers[0], (answers[1], answers[2], answers[3]), difficulty, category)
        )
    return tuple(out)


# ----------------------------------------------------------- OpenTDB fetch
def fetch_opentdb(
    amount: int,
    *,
    cache: str | os.PathLike[str] | None = None,
    base_url: str = OPENTDB_URL,
    difficulty: str | None = None,
    category: int | None = None,
    batch_size: int = 50,
    min_interval_s: float = 5.0,
    max_retries: int = 3,
    timeout_s: float = 20.0,
) -> Path:
    """Fetch up to ``amount`` new multiple-choice questions from the Open Trivia DB API into ``cache``.

    Uses a session token so one run never gets a question twice, appends only
    question texts not yet in the cache, and returns the cache path (load it
    with :func:`load_trivia` or pass it as Millionaire's ``questions``). The
    API allows one request per 5 s per IP, hence ``min_interval_s`` (and a
    back-off on response code 5). Rows keep the API's HTML encoding, exactly
    like the shared bank, so both load the same way.
    """
    import httpx

    amount = positive_int("amount", amount)
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty must be one of {list(DIFFICULTIES)} or None, got {difficulty!r}")
    path = Path(cache) if cache is not None else default_trivia_cache()
    path.parent.mkdir(parents=True, exist_ok=True)
    seen = _cached_questions(path)
    last = 0.0

    def get(client: httpx.Client, url: str, params: dict[str, Any]) -> dict[str, Any]:
        nonlocal last
        for attempt in range(max_retries + 1):
            wait = last + min_interval_s - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            last = time.monotonic()
            try:
                response = client.get(url, params=params)
                response.raise_for_status()
                body = response.json()
            except (httpx.HTTPError, ValueError) as e:
                raise DataError(
                    f"Open Trivia DB at {base_url}: {e}; check the network or try again later"
                ) from e
            if body.get("response_code") != 5 or attempt == max_retries:  # 5 = rate limited
                return body
            time.sleep(min_interval_s * (attempt + 1))
        raise AssertionError("unreachable")

    added = 0
    with httpx.Client(base_url=base_url, timeout=timeout_s, follow_redirects=True) as client:
        token = get(client, "/api_token.php", {"command": "request"}).get("token")
        with path.open("a", encoding="utf-8") as out:
            while added < amount:
                params: dict[str, Any] = {"amount": min(batch_size, amount - added), "type": "multiple"}
                if token:
                    params["token"] = token
                if difficulty:
                    params["difficulty"] = difficulty
                if category is not None:
                    params["category"] = category
                body = get(client, "/api.php", params)
                code = body.get("response_code")
                if code in (1, 4):  # 1: not enough questions left for this query, 4: token exhausted
                    break
                if code != 0:
                    raise DataError(
                        f"Open Trivia DB at {base_url} answered response_code {code} for {params}"
                    )
                results = body.get("results") or []
                fresh = 0
                for row in results:
                    if row.get("type", "multiple") != "multiple" or row.get("question") in seen:
                        continue
                    seen.add(row["question"])
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                    fresh += 1
                added += fresh
                if not results or (fresh == 0 and not token):
                    break
    return path


def _cached_questions(path: Path) -> set[str]:
    if not path.exists():
        return set()
    with path.open(encoding="utf-8") as f:
        return {json.loads(line).get("question") for line in f if line.strip()}


def _main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m s1gym.tasks.games.trivia", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    fetch = sub.add_parser("fetch", help="fetch Open Trivia DB questions into the local cache")
    fetch.add_argument("--amount", type=int, default=200)
    fetch.add_argument("--cache", type=Path, default=None, help=f"default: {default_trivia_cache()}")
    fetch.add_argument("--difficulty", choices=DIFFICULTIES, default=None)
    fetch.add_argument("--base-url", default=OPENTDB_URL)
    args = parser.parse_args(argv)
    path = fetch_opentdb(args.amount, cache=args.cache, difficulty=args.difficulty, base_url=args.base_url)
    print(f"{len(load_trivia(path))} questions in {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
