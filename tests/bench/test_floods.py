"""bench/floods.py at a CI size: each flood at 2 % of its full size against a real
``mqconform serve``, with the canary peeking every 0.2 s. What is checked is not a timing: the
canary kept sampling, every sample was the expected peek or an answer by which a server says
it is busy (bench/floods.py BUSY_FAULTS, BUSY_NAKS), the server survived and serves a fresh
client, and its memory after the flood was read. Latencies are the benchmark's to print."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location(
    "bench_floods", Path(__file__).resolve().parents[2] / "bench" / "floods.py")
floods = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = floods  # its dataclasses look their module up
SPEC.loader.exec_module(floods)

SCALE = 0.02
HOLD = 2.0
MIN_SAMPLES = 5  # per phase of the flood in place: 2 s at one sample every 0.2 s gives 10

#: a connection table smaller than the CI-sized floods (60 idle, 20 + 20 slowloris, 200
#: receivers' connections), so that the canary gets in only by the server's eviction
SERVE_ARGS = ("--max-connections", "32")


def run(name: str) -> dict:
    floods.raise_nofile()
    return floods.run_flood(name, SCALE, HOLD, drip=HOLD / 3, serve_args=SERVE_ARGS)


def check_canary_and_survival(result: dict) -> None:
    canary = result["canary"]
    assert canary["samples"] >= 3 * MIN_SAMPLES, canary
    assert canary["by_phase"]["hold"]["samples"] >= MIN_SAMPLES, canary["by_phase"]
    assert canary["by_phase"]["after"]["samples"] >= 1, canary["by_phase"]
    # once the flood is in place the canary connects afresh (bench/floods.py): a new client
    # got in, not only one that was there before the flood
    assert canary["reconnects"] >= 1, canary
    assert set(canary["verdicts"]) <= {"ok", "documented"}, (
        f"{canary['failed']} canary samples neither served nor refused as busy; first: "
        f"{canary['first_error']}")
    assert canary["verdicts"][-1] == "ok"  # served again once the flood is gone
    assert result["survived"]
    assert result["fresh_client"] == "ok"
    assert result["tracebacks"] == 0
    rss = result["rss_kib"]
    assert rss["before"] > 0 and rss["peak"] >= rss["before"] and rss["after"] > 0


def test_idle_and_bound_silent_connections_leave_room_for_a_new_client():
    result = run("idle")
    figures = result["figures"]
    assert figures["idle connections"] == figures["of"] == 60
    check_canary_and_survival(result)


def test_slowloris_under_and_over_the_frag_length_limit_leaves_the_canary_served():
    result = run("slowloris")
    figures = result["figures"]
    assert figures["under the limit (4,000)"] == figures["over the limit (65,535)"] == 20
    # C706 12.6.3.1: a frag_length past what the server receives breaks the framing: closed
    assert figures["over the limit kept at the end"] == 0
    check_canary_and_survival(result)


def test_endless_fragments_up_to_the_reassembly_cap_leave_the_canary_served():
    result = run("fragments")
    assert result["figures"]["stub octets sent (MiB)"] >= 7.9
    check_canary_and_survival(result)


def test_opens_then_a_dropped_connection_run_down_and_the_canary_is_served():
    result = run("opens")
    figures = result["figures"]
    assert figures["opened"] == figures["of"] > 0
    check_canary_and_survival(result)


def test_pending_receives_then_a_dropped_connection_leave_the_canary_served():
    result = run("receives")
    figures = result["figures"]
    assert figures["receives sent"] == figures["of"] == 200
    # a blocking receive on an empty queue with a one-hour timeout waits (MS-MQRR 3.1.4.7)
    assert figures["answered before the drop (should be 0)"] == 0
    check_canary_and_survival(result)


@pytest.mark.parametrize("argv, message", [
    (["--scale", "0"], "--scale 0.0: a factor in (0, 10]"),
    (["--only", "tsunami"], "invalid choice: 'tsunami'"),
    (["--build-limit", "-1"], "--build-limit -1.0: seconds, more than 0"),
])
def test_bad_options_are_one_line_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        floods.main(argv)
    assert exc.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "error:" in last and message in last
