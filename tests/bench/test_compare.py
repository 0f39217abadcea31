"""bench/compare.py: the figures of two runs of one benchmark lined up, line by line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location(
    "bench_compare", Path(__file__).resolve().parents[2] / "bench" / "compare.py")
compare = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(compare)


def test_lines_that_differ_only_in_figures_are_paired_with_their_ratios():
    before = ["corpus: 1,000 frames", "ours, headers only  12.5 s  80000 frames/s  ratio 1.20",
              "p99 4.0 ms", "a line without figures"]
    after = ["corpus: 1,000 frames", "ours, headers only  10.0 s  100,000 frames/s  ratio 1.50",
             "p99 2.0 ms", "something new 7"]
    assert compare.side_by_side(before, after) == [
        "corpus: [1000 -> 1000 (1.00)] frames",
        "ours, headers only  [12.5 -> 10 (0.80)] s  [80000 -> 100000 (1.25)] frames/s  "
        "ratio [1.2 -> 1.5 (1.25)]",
        "p99 [4 -> 2 (0.50)] ms"]


def test_names_with_digits_are_not_figures():
    assert compare.side_by_side(["NDR64 calls 10"], ["NDR64 calls 20"]) == [
        "NDR64 calls [10 -> 20 (2.00)]"]


def test_an_unknown_benchmark_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        compare.main(["--baseline", "HEAD", "nonsense"])
    assert exc.value.code == 2
    assert "no benchmark bench/nonsense.py" in capsys.readouterr().err


def test_rounds_give_the_median_of_each_figure_line_by_line():
    runs = [["corpus: 1,000 frames", "local[1] 12.5 s  80000 frames/s", "p99 4.0 ms"],
            ["corpus: 1,000 frames", "local[1] 10.0 s  100,000 frames/s", "p99 9.0 ms",
             "only here 3"],
            ["corpus: 1,000 frames", "local[1] 11.0 s  90000 frames/s", "p99 5.5 ms"]]
    assert compare.medians(runs) == ["corpus: 1000 frames", "local[1] 11 s  90000 frames/s",
                                     "p99 5.5 ms"]


def test_rounds_below_one_are_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        compare.main(["--baseline", "HEAD", "--rounds", "0", "model"])
    assert exc.value.code == 2
    assert "--rounds must be at least 1" in capsys.readouterr().err
