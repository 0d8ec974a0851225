"""Which due-index shards a run takes: ``--shards I-J``, ``--shard K/N`` (host K
of N, 0-based, as a Kubernetes Indexed Job's ``JOB_COMPLETION_INDEX``), and the split of
a host's shards over ``--processes P``.

A shard set is a contiguous range ``first..last`` of the table's ``count`` shards, so a
run record can say in three numbers what it covered (``BatchRun.ShardFirst`` ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from billing.exceptions import ShardChoiceError


@dataclass(frozen=True)
class ShardSet:
    first: int
    last: int  # inclusive
    count: int  # the table's shard count the range is of

    def __post_init__(self) -> None:
        if not (0 <= self.first <= self.last < self.count):
            raise ShardChoiceError(f"shards {self.first}-{self.last} are not within 0-{self.count - 1}")

    @classmethod
    def every(cls, count: int) -> ShardSet:
        return cls(0, count - 1, count)

    @property
    def members(self) -> list[int]:
        return list(range(self.first, self.last + 1))

    @property
    def is_every(self) -> bool:
        return self.first == 0 and self.last == self.count - 1

    def __str__(self) -> str:
        return f"{self.first}-{self.last}/{self.count}"

    def split(self, parts: int) -> list[ShardSet]:
        """``parts`` contiguous, near-equal slices (fewer when there are fewer shards)."""
        size = self.last - self.first + 1
        parts = max(1, min(parts, size))
        bounds = [self.first + size * n // parts for n in range(parts + 1)]
        return [ShardSet(bounds[n], bounds[n + 1] - 1, self.count) for n in range(parts)]


def parse_range(text: str, count: int) -> ShardSet:
    """``I-J`` (inclusive) or ``K`` of the table's ``count`` shards."""
    match = re.fullmatch(r"(\d+)(?:-(\d+))?", text.strip())
    if not match:
        raise ShardChoiceError(f"--shards takes I-J or K (shard numbers from 0), not {text!r}")
    first = int(match[1])
    last = int(match[2]) if match[2] is not None else first
    if first > last or last >= count:
        raise ShardChoiceError(f"--shards {text}: the table has {count} shard(s), numbered 0-{count - 1}")
    return ShardSet(first, last, count)


def host_share(host: int, hosts: int, count: int) -> ShardSet | None:
    """Host ``host`` (0-based) of ``hosts``: its contiguous block of the ``count`` shards;
    None when there are more hosts than shards and this one gets none."""
    if hosts < 1 or not 0 <= host < hosts:
        raise ShardChoiceError(f"host {host} of {hosts}: K must be 0..N-1 (0-based, like JOB_COMPLETION_INDEX)")
    first, end = count * host // hosts, count * (host + 1) // hosts
    return ShardSet(first, end - 1, count) if end > first else None


def parse_host_share(text: str, count: int) -> ShardSet | None:
    """``K/N``: host K (0-based) of N."""
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match:
        raise ShardChoiceError(f"--shard takes K/N (host K of N, K from 0), not {text!r}")
    return host_share(int(match[1]), int(match[2]), count)
