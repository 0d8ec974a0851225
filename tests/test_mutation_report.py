"""scripts/mutation_report.py: the per-module score from mutmut's results, with the
survivors a recheck killed (or stopped as looping) counted as killed; and
scripts/mutants_recheck.py's time limit."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import mutation_report  # noqa: E402 (a script, not a package)
from mutants_recheck import _wait  # noqa: E402


@pytest.fixture
def mutants(tmp_path: Path) -> Path:
    # mutmut's exit codes: 1 killed, 0 survived, None not run, 36 timeout
    codes = {"m.x_f__mutmut_1": 1, "m.x_f__mutmut_2": 0, "m.x_f__mutmut_3": 0, "m.x_f__mutmut_4": None,
             "m.x_f__mutmut_5": 36}
    (tmp_path / "billing").mkdir()
    (tmp_path / "billing" / "m.py.meta").write_text(json.dumps({"exit_code_by_key": codes}))
    return tmp_path


def test_the_score_counts_the_mutants_run(mutants: Path, capsys) -> None:
    assert mutation_report.main(["--mutants", str(mutants), "--min", "50"]) == 0
    out = capsys.readouterr().out
    # 4 run (one not run): killed and timeout, 2 of 4
    assert "billing/m.py" in out and "50.0%" in out
    assert "2 surviving mutants:" in out and "m.x_f__mutmut_2  [survived]" in out
    assert mutation_report.main(["--mutants", str(mutants), "--min", "51"]) == 1


def test_a_survivor_the_recheck_killed_counts_as_killed(mutants: Path, tmp_path: Path, capsys) -> None:
    recheck = tmp_path / "recheck.txt"
    recheck.write_text("killed m.x_f__mutmut_2\nSURVIVED m.x_f__mutmut_3\nkilled m.x_f__mutmut_4\n")
    assert mutation_report.main(["--mutants", str(mutants), "--rechecked", str(recheck), "--min", "75"]) == 0
    out = capsys.readouterr().out
    assert "75.0%" in out  # 3 of the 4 run; the not-run one stays not run
    assert "1 surviving mutants:" in out and "m.x_f__mutmut_3  [survived]" in out


def test_a_mutant_the_recheck_stopped_as_looping_counts_as_killed(mutants: Path, tmp_path: Path, capsys) -> None:
    recheck = tmp_path / "recheck.txt"
    recheck.write_text("timeout m.x_f__mutmut_2\n")
    assert mutation_report.main(["--mutants", str(mutants), "--rechecked", str(recheck), "--min", "75"]) == 0
    assert "75.0%" in capsys.readouterr().out  # 3 of the 4 run


def test_the_recheck_stops_a_run_past_its_time_limit() -> None:
    looping = os.fork()
    if looping == 0:  # a mutant's run that never ends
        time.sleep(30)
        os._exit(0)
    assert _wait(looping, 0.3) is None
    killed = os.fork()
    if killed == 0:
        os._exit(1)
    assert _wait(killed, 30) == 1
