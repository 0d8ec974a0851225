"""Per-module mutation score and the surviving mutants, from mutmut's results.

``make mutate`` runs it after ``mutmut run``; it reads the ``mutants/<module>.meta`` files
mutmut leaves behind (JSON: each mutant's test exit code) and prints one line per mutated
module, then every survivor. ``--diffs`` also prints each survivor's diff (``mutmut show``).

Score = (killed + timeout) / (mutants that were run). A mutant no selected test reaches
("no tests") counts against the score, as a survivor would: no test would notice it.
Exit status 1 when a module scores below ``--min`` (default 0: report only).

``--rechecked FILE``: the output of scripts/mutants_recheck.py (``killed <mutant>`` and
``timeout <mutant>`` lines).
mutmut does not run a survivor again while its function is unchanged, nor a test it
mapped before on the mutants that test now kills; a survivor the recheck killed with
today's tests counts as killed, in a column of its own.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

KILLED = {"killed", "timeout", "caught by type check", "rechecked"}
NOT_RUN = {"not checked", "skipped", "check was interrupted by user"}


def module_results(root: Path) -> dict[str, dict[str, str]]:
    """{module path: {mutant name: status}} for every module mutmut mutated."""
    results = {}
    for meta in sorted(root.rglob("*.py.meta")):
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        if codes:
            module = str(meta.relative_to(root))[: -len(".meta")]
            results[module] = {name: status_by_exit_code[code] for name, code in codes.items()}
    return results


def rechecked_kills(path: Path | None) -> set[str]:
    """The mutants a ``mutants_recheck.py`` output says the tests kill."""
    if path is None:
        return set()
    # a "timeout" line is a looping mutant the recheck stopped: killed, as mutmut counts one
    return {line.split()[1] for line in path.read_text().splitlines() if line.startswith(("killed ", "timeout "))}


def apply_rechecks(results: dict[str, dict[str, str]], killed: set[str]) -> None:
    """A survivor the recheck killed counts as killed (status "rechecked")."""
    for statuses in results.values():
        for name, status in statuses.items():
            if name in killed and status == "survived":
                statuses[name] = "rechecked"


def score(statuses: dict[str, str]) -> tuple[Counter, float | None]:
    counts = Counter(statuses.values())
    run = sum(n for status, n in counts.items() if status not in NOT_RUN)
    killed = sum(counts[s] for s in KILLED)
    return counts, (100.0 * killed / run if run else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=Path, default=Path("mutants"), help="mutmut's working folder")
    parser.add_argument("--diffs", action="store_true", help="print each survivor's diff")
    parser.add_argument("--min", type=float, default=0.0, help="fail when a module scores below this")
    parser.add_argument("--rechecked", type=Path, help="mutants_recheck.py's output: its kills count")
    args = parser.parse_args(argv)

    results = module_results(args.mutants)
    if not results:
        print("no mutation results: run `make mutate` (mutmut run) first")
        return 1
    apply_rechecks(results, rechecked_kills(args.rechecked))
    print(f"{'module':36} {'mutants':>7} {'killed':>6} {'timeout':>7} {'recheck':>7} {'survived':>8} {'no tests':>8} "
          f"{'not run':>7} {'score':>7}")
    low = []
    for module, statuses in results.items():
        counts, pct = score(statuses)
        not_run = sum(counts[s] for s in NOT_RUN)
        shown = "-" if pct is None else f"{pct:.1f}%"
        print(f"{module:36} {len(statuses):7} {counts['killed']:6} {counts['timeout']:7} {counts['rechecked']:7} "
              f"{counts['survived']:8} {counts['no tests']:8} {not_run:7} {shown:>7}")
        if pct is not None and pct < args.min:
            low.append(module)
    survivors = [(m, name, status) for m, statuses in results.items() for name, status in statuses.items()
                 if status not in KILLED | NOT_RUN]
    print(f"\n{len(survivors)} surviving mutants" + (":" if survivors else ""))
    for _module, name, status in survivors:
        print(f"  {name}  [{status}]")
        if args.diffs:
            shown = subprocess.run([sys.executable, "-m", "mutmut", "show", name], capture_output=True, text=True)
            print("    " + "\n    ".join(shown.stdout.strip().splitlines()))
    if low:
        print(f"\nbelow {args.min}%: {', '.join(low)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
