"""``mqconform captures validate`` on Spark (captures/pipeline.py) over a synthetic corpus
(conformance/synth.py: real clients, reference servers over TCP, seeded faults with labels):
every faulty flow flagged with its requirement, no violation on a clean flow; bad files
listed and counted without failing the job; the same job on a real standalone cluster on
127.0.0.1 writes the same tables as local mode."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mqconform.captures import pipeline
from mqconform.conformance import synth
from mqconform.server.faults import FAULTS

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    synth.synth(out, servers=4, connections=6, fault_rate=0.5, seed=6, steps=60)
    return out


@pytest.fixture(scope="module")
def spark():
    session = pipeline.session("local[2]")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def validated(corpus, spark, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("validated")
    pipeline.run([str(corpus)], out, spark=spark)
    return out


def _rows(path: Path) -> list:
    rows = pq.read_table(str(path)).to_pylist()
    return sorted(rows, key=lambda r: repr(sorted(r.items())))


@pytest.mark.req(*sorted(set(FAULTS.values())))
def test_every_faulty_flow_is_flagged_and_no_clean_flow_is(corpus, validated):
    labels = json.loads((corpus / "labels.json").read_text())
    score = pipeline.score_against(labels, validated)
    print(f"\nsynthetic corpus: {score['flows']} flows, {score['faulty_flows']} faulty, "
          f"{score['clean_flows']} clean; recall {score['recall']:.1%}, false positive "
          f"flows {score['false_positive_flows']}")
    for requirement, row in sorted(score["per_requirement"].items()):
        print(f"  {requirement}: {row['flagged']}/{row['faulty_flows']} faulty flows flagged")
    assert score["missed"] == {} and score["recall"] == 1.0
    assert score["false_positives"] == {}
    assert score["clean_flows"] >= 10 and score["faulty_flows"] >= 10
    # every seeded fault acted, so recall covers each requirement
    assert set(score["per_requirement"]) >= set(FAULTS.values())


def test_the_synthetic_clients_cursor_reads_return_messages(corpus, validated):
    """A new cursor's first read peeks at its current message, later ones at the next (MS-MQRR
    3.1.4.7, MS-MQDMPR 3.2.7): the corpus holds cursor reads of each kind that return a
    message, and none refused as an illegal cursor action."""
    from mqconform.captures.decode import decode_all
    from mqconform.model import calls as c

    reads = [r for r in pq.read_table(str(validated / "calls")).to_pylist()
             if r["method"] == "R_StartReceive" and r["cursor"]]
    assert reads and not [r for r in reads if r["status"] == 0xC00E001C]
    ok = {r["action"]: 0 for r in reads}
    for r in reads:
        ok[r["action"]] += r["status"] == 0 and bool(r["sequence_id"])
    assert ok[c.MQ_ACTION_PEEK_CURRENT] >= 5 and ok[c.MQ_ACTION_PEEK_NEXT] >= 5 \
        and ok[c.MQ_ACTION_RECEIVE] >= 1, ok
    # the answers carry the message (a packet section holding the body the queue was sent)
    answers = [json.loads(x.response) for x in decode_all(sorted(corpus.glob("*.pcap"))).calls
               if x.method == "R_StartReceive" and x.cursor and x.status == 0]
    assert answers and all(a["pdwNumberOfSections"] >= 1 and b"message ".hex() in
                           a["ppPacketSections"][0]["pSectionBuffer"]["hex"] for a in answers)


def test_the_tables_hold_what_the_decoder_and_the_observer_found(corpus, validated):
    from mqconform.captures.decode import decode_all
    from mqconform.model.observer import Observed, observe

    decoded = decode_all(sorted(corpus.glob("*.pcap")))
    calls = pq.read_table(str(validated / "calls"))
    assert calls.num_rows == len(decoded.calls)
    assert set(calls.schema.names) == set(pipeline.arrow_schema("calls").names)
    files = sorted(_rows(validated / "files"), key=lambda f: f["capture"])
    assert [f["frames"] for f in files] == [s.frames for s in decoded.summaries]
    # the observer in one process over the same calls finds the same violations
    names = [f for f in Observed.__slots__ if f not in ("request_frame", "response_frame",
                                                          "complete")]
    by_server: dict[str, list] = {}
    for x in decoded.calls:
        o = Observed(**{n: getattr(x, n) for n in names if hasattr(x, n)},
                     request_frame=x.request_first_frame,
                     response_frame=x.response_last_frame,
                     complete=x.decode_error is None)
        by_server.setdefault(x.server, []).append(o)
    expected = sorted((v.requirement, Path(v.capture).name, v.request_frame)
                      for server, calls_ in by_server.items() for v in observe(calls_, server))
    got = sorted((r["requirement"], Path(r["capture"]).name, r["request_frame"])
                 for r in pq.read_table(str(validated / "violations")).to_pylist())
    assert got == expected and got
    report = json.loads((validated / "report.json").read_text())
    assert report["totals"]["violations"] == len(got) and report["totals"]["reconciles"]
    html = (validated / "index.html").read_text()
    assert all(r["requirement"] in html for r in report["requirements"])
    summary = _rows(validated / "summary")
    assert sum(r["violations"] for r in summary) == len(got)


def test_bad_files_are_listed_counted_and_do_not_fail_the_job(corpus, spark, tmp_path):
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    good = sorted(corpus.glob("*.pcap"))[0]
    shutil.copy(good, mixed / "good.pcap")
    data = good.read_bytes()
    (mixed / "truncated.pcap").write_bytes(data[:len(data) // 2 + 3])
    (mixed / "corrupt.pcap").write_bytes(data[:24] + b"\xff" * 16 + data[40:400])
    (mixed / "foreign.pcap").write_bytes(b"<html>not a capture</html>\n" * 20)
    (mixed / "empty.pcapng").write_bytes(b"")
    out = tmp_path / "out"
    result = pipeline.run([str(mixed)], out, spark=spark)
    files = {Path(f["capture"]).name: f for f in _rows(out / "files")}
    assert set(files) == {"good.pcap", "truncated.pcap", "corrupt.pcap", "foreign.pcap",
                          "empty.pcapng"}
    for name, f in files.items():
        assert f["frames"] == f["decoded"] + f["rejected"] + f["not_dcerpc"], name
    kinds = {(Path(e["capture"]).name, e["kind"]) for e in _rows(out / "errors")}
    assert {("truncated.pcap", "truncated"), ("foreign.pcap", "format"),
            ("empty.pcapng", "format")} <= kinds
    assert any(name == "corrupt.pcap" for name, _ in kinds)
    assert files["good.pcap"]["errors"] == 0 and result.files == 5
    assert result.errors == sum(f["errors"] for f in files.values()) > 0


def test_the_command_line(corpus, tmp_path):
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "validate",
                           str(tmp_path / "nothing-here"), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no such file" in done.stderr
    assert done.stderr.strip().count("\n") == 0
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "validate",
                           str(corpus), "--out", str(tmp_path / "o"), "--master", "bogus"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "not a Spark master URL" in done.stderr
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "validate",
                           str(corpus / "server-00.pcap"), "--out", str(tmp_path / "o"),
                           "--master", "local[1]", "--labels", str(corpus / "labels.json")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr  # server-00 has faults armed
    assert "violation(s)" in done.stdout and "recall" in done.stdout
    assert (tmp_path / "o" / "index.html").exists()


# ------------------------------------------------------------------ a standalone cluster


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(path: Path, text: str, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and text in path.read_text(errors="replace"):
            return True
        time.sleep(0.3)
    return False


@pytest.fixture
def cluster(tmp_path):
    """A Spark standalone master and one worker on 127.0.0.1 (pyspark's spark-class),
    stopped by PID afterwards."""
    import pyspark

    home = Path(pyspark.__file__).parent
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_WORKER_DIR=str(tmp_path / "work"), PYSPARK_PYTHON=sys.executable)
    props = tmp_path / "spark.properties"
    props.write_text("spark.master.rest.enabled false\nspark.ui.enabled false\n")
    port = _free_port()
    logs = {n: tmp_path / f"{n}.log" for n in ("master", "worker")}
    procs = []
    try:
        procs.append(subprocess.Popen(
            [str(home / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master",
             "--host", "127.0.0.1", "--port", str(port), "--webui-port", "0",
             "--properties-file", str(props)],
            env=env, stdout=logs["master"].open("w"), stderr=subprocess.STDOUT,
            start_new_session=True))
        assert _wait_for(logs["master"], "I have been elected leader", 90), \
            logs["master"].read_text()[-2000:]
        procs.append(subprocess.Popen(
            [str(home / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker",
             "--cores", "2", "--memory", "2g", "--webui-port", "0",
             "--properties-file", str(props), f"spark://127.0.0.1:{port}"],
            env=env, stdout=logs["worker"].open("w"), stderr=subprocess.STDOUT,
            start_new_session=True))
        assert _wait_for(logs["worker"], "Successfully registered with master", 90), \
            logs["worker"].read_text()[-2000:]
        yield f"spark://127.0.0.1:{port}"
    finally:
        for proc in reversed(procs):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def test_a_standalone_cluster_writes_the_same_tables_as_local_mode(corpus, validated,
                                                                     cluster, tmp_path):
    """From a shell in another directory than the captures', with relative paths (the tasks
    run in the worker's directory): every table as local mode's, and the driver on loopback
    as the master is, with no SPARK_LOCAL_IP set."""
    cwd = tmp_path / "elsewhere" / "shell"
    cwd.mkdir(parents=True)
    relative = os.path.relpath(corpus, cwd)
    assert relative.startswith("..") and not (cwd / relative).samefile(cwd)
    env = {k: v for k, v in os.environ.items() if k != "SPARK_LOCAL_IP"}
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "validate",
                           relative, "--out", "cluster-out", "--master", cluster],
                          capture_output=True, text=True, timeout=900, cwd=cwd,
                          env=dict(env, PYSPARK_PYTHON=sys.executable))
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    out = cwd / "cluster-out"
    for table in pipeline.TABLES:
        assert _rows(out / table) == _rows(validated / table), table
    # the tables name the captures by the paths they were read from, resolved on the driver
    assert {f["capture"] for f in _rows(out / "files")} == \
        {str(p) for p in corpus.glob("*.pcap")}
    # the executors were told to reach the driver on loopback
    log = (tmp_path / "worker.log").read_text()
    urls = re.findall(r'"--driver-url" "spark://[^@"]*@([^"]+):\d+"', log)
    assert urls and set(urls) == {"127.0.0.1"}, log[-3000:]
    local = json.loads((validated / "report.json").read_text())
    remote = json.loads((out / "report.json").read_text())
    local.pop("seconds"), remote.pop("seconds")
    assert local == remote


def test_full_fields_fill_the_json_columns(corpus, spark, tmp_path):
    one = sorted(corpus.glob("*.pcap"))[0]
    pipeline.run([str(one)], tmp_path / "lean", spark=spark)
    pipeline.run([str(one)], tmp_path / "full", spark=spark, json_fields=True)
    lean = pq.read_table(str(tmp_path / "lean" / "calls")).to_pylist()
    full = pq.read_table(str(tmp_path / "full" / "calls")).to_pylist()
    assert all(r["request"] is None for r in lean)
    assert all(r["request"] is not None for r in full if r["decode_error"] is None)
    drop = ("request", "response")
    key = lambda r: (r["connection"], r["call_id"], r["request_first_frame"])  # noqa: E731
    assert [{k: v for k, v in r.items() if k not in drop} for r in sorted(lean, key=key)] == \
        [{k: v for k, v in r.items() if k not in drop} for r in sorted(full, key=key)]
    assert _rows(tmp_path / "lean" / "violations") == _rows(tmp_path / "full" / "violations")


def test_inputs_may_be_uris_globs_and_directories(corpus, spark, tmp_path):
    first, *rest = sorted(corpus.glob("*.pcap"))
    paths = pipeline.expand([f"file://{first}", str(corpus / "server-0[1-2].pcap"),
                             str(corpus)])
    assert paths == [str(first), *map(str, rest)]  # in order, each file once
    assert pipeline.expand([str(corpus)]) == [str(p) for p in sorted(corpus.glob("*.pcap"))]
    with pytest.raises(pipeline.PipelineError, match="no such file"):
        pipeline.expand([str(tmp_path / "absent")])
    empty = tmp_path / "empty-dir"
    empty.mkdir()
    with pytest.raises(pipeline.PipelineError, match="no capture files"):
        pipeline.expand([str(empty)])
    result = pipeline.run([f"file://{first}"], tmp_path / "o", spark=spark)
    assert result.files == 1 and result.calls > 0


def _split(source: Path, first: Path, second: Path) -> None:
    """A classic pcap cut in two at its middle record (one server, two files)."""
    data = source.read_bytes()
    offsets, at = [], 24
    while at + 16 <= len(data):
        offsets.append(at)
        at += 16 + int.from_bytes(data[at + 8:at + 12], "little")
    middle = offsets[len(offsets) // 2]
    first.write_bytes(data[:middle])
    second.write_bytes(data[:24] + data[middle:])


def test_servers_in_one_file_or_in_several_give_the_violations_of_the_shuffle(
        corpus, spark, tmp_path):
    """The per-file path (a server seen in one file is observed in that file's task) and the
    shuffle (every server through Spark's repartition and sort) write the same tables, on a
    corpus where one server's traffic is split over two files."""
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    captures = sorted(corpus.glob("*.pcap"))
    for capture in captures[1:]:
        shutil.copy(capture, mixed / capture.name)
    _split(captures[0], mixed / "a-first.pcap", mixed / "a-second.pcap")
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    pipeline.run([str(mixed)], fast, spark=spark)
    pipeline.run([str(mixed)], slow, spark=spark, per_file=False)
    servers = pq.read_table(str(fast / "calls"), columns=["server", "capture"]).to_pylist()
    spans = {}
    for row in servers:
        spans.setdefault(row["server"], set()).add(row["capture"])
    assert any(len(c) > 1 for c in spans.values()) and any(len(c) == 1 for c in spans.values())
    assert _rows(fast / "violations"), "the corpus has faults: there are violations to compare"
    for table in pipeline.TABLES:
        assert _rows(fast / table) == _rows(slow / table), table
    # the command line starts a SparkContext alone and a session on it for the shuffle
    cli = tmp_path / "cli"
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "validate",
                           str(mixed), "--out", str(cli)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "seen in several files" in done.stdout + done.stderr
    for table in pipeline.TABLES:
        assert _rows(cli / table) == _rows(slow / table), table


def test_a_file_too_big_to_observe_in_its_task_goes_through_the_shuffle(corpus, spark,
                                                                       tmp_path, monkeypatch):
    """Files over OBSERVE_IN_TASK_BYTES are not held in their task: their servers are
    observed across files, with the same tables as in the files' own tasks."""
    one = tmp_path / "one"
    pipeline.run([str(corpus)], one, spark=spark)
    monkeypatch.setattr(pipeline, "OBSERVE_IN_TASK_BYTES", 1)
    progress: list[str] = []
    big = tmp_path / "big"
    pipeline.run([str(corpus)], big, spark=spark, progress=progress.append)
    assert any("seen in several files" in p for p in progress)  # stage 2 ran
    assert _rows(big / "violations"), "the corpus has faults"
    for table in pipeline.TABLES:
        assert _rows(big / table) == _rows(one / table), table


def test_an_observer_defect_is_the_files_error_row_not_a_failed_job(corpus, tmp_path,
                                                                    monkeypatch):
    """A file task whose observer raises writes the file's calls and an ``internal`` error
    row, counts it in the file's summary, and returns (the job goes on)."""
    def broken(columns):
        raise RuntimeError("a seeded defect")
        yield  # a generator, as the real one

    monkeypatch.setattr(pipeline, "_observe_columns", broken)
    first = sorted(corpus.glob("*.pcap"))[0]
    result = pipeline._one_file(0, str(first), str(tmp_path), False, pipeline.OBSERVE_IN_TASK)
    assert json.loads(result["error_kinds"]) == {"internal": 1}
    assert json.loads(result["summary"])["errors"] == 1 and result["observed"]
    [error] = pq.read_table(str(tmp_path / "errors")).to_pylist()
    assert error["kind"] == "internal" and "a seeded defect" in error["message"]
    assert pq.read_table(str(tmp_path / "calls")).num_rows > 0
    assert pq.read_table(str(tmp_path / "violations")).num_rows == 0


# ------------------------------------------------------------------------- server lifetimes


def _result(index, capture, **spans):
    """A stage-1 result row with spans: server -> (first, last, digest, clients, midway)."""
    return {"index": index, "capture": capture, "spans": json.dumps({
        server: [first, last, digest, 1, sorted(clients), sorted(midway)]
        for server, (first, last, digest, clients, midway) in spans.items()})}


S = "10.0.0.2:2103"


def test_chunks_of_one_capture_join_and_separate_captures_do_not():
    from mqconform.captures.pipeline import plan_lifetimes

    results = [
        # a ring buffer: chunk 2 holds the rest of a connection of chunk 1 (no bind in it)
        _result(0, "ring_00001.pcapng", **{S: (100.0, 200.0, "a", {"c:1"}, set())}),
        _result(1, "ring_00002.pcapng", **{S: (200.5, 300.0, "b", {"c:1", "c:2"}, {"c:1"})}),
        # another capture, later, every connection whole: a lifetime of its own; and one of
        # the same name in another folder, following it, is another lifetime again
        _result(5, "wed/tuesday.pcap", **{S: (400.5, 500.0, "e", {"c:3"}, set())}),
        _result(2, "tuesday.pcap", **{S: (300.2, 400.0, "c", {"c:3"}, set())}),
        # overlapping in time with the ring: a separate lifetime too
        _result(3, "other.pcap", **{S: (150.0, 160.0, "d", {"c:1"}, {"c:1"})}),
        # a copy of chunk 1: counted once
        _result(4, "copy/ring_00001.pcapng", **{S: (100.0, 200.0, "a", {"c:1"}, set())}),
    ]
    plan = plan_lifetimes(results, "auto")
    assert plan["of"][(S, 0)] == plan["of"][(S, 1)] == f"{S} from ring_00001.pcapng"
    assert plan["of"][(S, 2)] == f"{S} from tuesday.pcap"
    assert plan["of"][(S, 5)] == f"{S} from wed/tuesday.pcap"
    assert plan["of"][(S, 3)] == f"{S} from other.pcap"
    assert (S, 4) not in plan["of"]
    assert plan["duplicates"] == [{"server": S, "capture": "copy/ring_00001.pcapng",
                                   "copy_of": "ring_00001.pcapng", "calls": 1}]
    assert sorted(map(sorted, plan["files"].values())) == [[0, 1], [2], [3], [5]]

    per_file = plan_lifetimes(results, "per-file")
    assert len({per_file["of"][(S, i)] for i in (0, 1, 2, 3, 5)}) == 5
    joined = plan_lifetimes(results, "joined")
    assert len(set(joined["of"].values())) == 1 and not joined["duplicates"]


@pytest.mark.skipif(shutil.which("editcap") is None, reason="editcap is not installed")
def test_a_capture_cut_by_editcap_and_gzipped_gives_the_violations_of_the_whole(
        corpus, spark, tmp_path):
    """editcap -c pieces (some gzipped, as a ring buffer's old files are): one chain of
    files decoded as one stream, so binds, PDUs and calls cut at a boundary are read whole;
    the same calls and violations as the capture in one file, and every call checked."""
    labels = json.loads((corpus / "labels.json").read_text())
    faulty = {Path(a["capture"]).name for a in labels["activations"]}
    whole = max((p for p in corpus.glob("*.pcap") if p.name in faulty),
                key=lambda p: p.stat().st_size)
    pieces = tmp_path / "pieces"
    pieces.mkdir()
    subprocess.run(["editcap", "-c", "60", str(whole), str(pieces / "ring.pcapng")],
                   check=True, capture_output=True)
    names = sorted(pieces.iterdir())
    assert len(names) > 5
    for name in names[::2]:
        name.with_name(name.name + ".gz").write_bytes(gzip.compress(name.read_bytes()))
        name.unlink()
    one, cut = tmp_path / "one", tmp_path / "cut"
    pipeline.run([str(whole)], one, spark=spark)
    result = pipeline.run([str(pieces)], cut, spark=spark)
    assert result.files == len(names) and result.seen == result.checked == \
        pipeline.run([str(whole)], tmp_path / "again", spark=spark).checked > 0
    report = json.loads((cut / "report.json").read_text())
    assert len(report["lifetimes"]) == len({r["server"] for r in _rows(one / "calls")})

    def calls(out: Path) -> list:
        keep = ("client", "server", "call_id", "method", "status", "fault", "handle",
                "result_handle", "queue", "request_id", "lookup_id", "decode_error")
        return sorted(repr(tuple(r[k] for k in keep) + (round(r["request_time"] or 0, 5),))
                      for r in _rows(out / "calls"))

    def violations(out: Path) -> list:  # where they were found: in other files and frames
        return sorted(repr((v["requirement"], v["actor"], v["server"], v["client"],
                            v["call_id"], v["method"],
                            re.sub(r"\([^()]*, frame \d+\)|frame \d+", "", v["explanation"])))
                      for v in _rows(out / "violations"))

    assert calls(cut) == calls(one)
    assert violations(one), "the corpus has faults: there are violations to compare"
    assert violations(cut) == violations(one)


def test_an_unknown_history_is_refused():
    from mqconform.captures.pipeline import PipelineError, plan_lifetimes

    with pytest.raises(PipelineError, match="--history sometimes"):
        plan_lifetimes([], "sometimes")


def test_the_golden_vectors_validate_with_no_server_violation_and_exit_0(tmp_path):
    """captures/golden: 442 files of one address pair, each its own history (no file carries
    on another's connection); their deliberate client departures listed beside them."""
    golden = Path(__file__).resolve().parents[2] / "captures" / "golden"
    out = tmp_path / "v"
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "validate",
                           str(golden), "--out", str(out)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "unexpected: 0 violation(s), 0 decoding error(s)" in done.stdout
    violations = _rows(out / "violations")
    assert violations and not [v for v in violations if v["actor"] == "server"]
    report = json.loads((out / "report.json").read_text())
    assert len(report["lifetimes"]) > 100
    assert all(len(lt["captures"]) == 1 for lt in report["lifetimes"])
    assert all(v["lifetime"].startswith("10.0.0.2:2103 from ") for v in violations)


# ------------------------------------------------------------ paths resolved on the driver


def test_relative_inputs_and_out_are_resolved_on_the_driver(corpus, tmp_path, monkeypatch):
    monkeypatch.chdir(corpus.parent)
    first = sorted(corpus.glob("*.pcap"))[0]
    assert pipeline.expand([corpus.name]) == [str(p) for p in sorted(corpus.glob("*.pcap"))]
    assert pipeline.expand([f"{corpus.name}/{first.name}"]) == [str(first)]
    assert pipeline.expand([f"{corpus.name}/server-0[0].pcap"]) == [str(first)]
    assert pipeline.expand([f"file://{first}"]) == [str(first)]
    assert pipeline.out_dir("rel/out") == corpus.parent / "rel" / "out"
    assert pipeline.out_dir(f"file://{tmp_path}/o") == tmp_path / "o"
    with pytest.raises(pipeline.PipelineError, match="--out hdfs://nn/x"):
        pipeline.out_dir("hdfs://nn/x")


def test_the_driver_address_follows_the_masters(monkeypatch, tmp_path):
    for master in (None, "local[2]", "spark://127.0.0.1:7077", "spark://localhost:7077",
                   "spark://127.0.0.1:7077,localhost:7078"):
        assert pipeline.loopback_master(master), master
    for master in ("spark://10.1.2.3:7077", "spark://spark-master:7077",
                   "spark://127.0.0.1:7077,spark-master:7077", "yarn", "k8s://https://k:6443"):
        assert not pipeline.loopback_master(master), master
    monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))  # no defaults file there

    def address(master, config=None):
        return {k: v for k, v in pipeline._settings(master, config)
                if k in pipeline.DRIVER_ADDRESS}

    loopback = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    assert address("spark://127.0.0.1:7077") == loopback
    assert address("spark://localhost:7077") == loopback
    assert address("spark://10.1.2.3:7077") == {}  # Spark's default
    # the user's choice stands: in the config, SPARK_LOCAL_IP or spark-defaults.conf
    assert address("spark://127.0.0.1:7077", {"spark.driver.host": "10.0.0.5"}) == {}
    (tmp_path / "spark-defaults.conf").write_text("spark.driver.bindAddress 0.0.0.0\n")
    assert address("spark://127.0.0.1:7077") == {}
    (tmp_path / "spark-defaults.conf").unlink()
    monkeypatch.setenv("SPARK_LOCAL_IP", "10.0.0.5")
    assert address("spark://127.0.0.1:7077") == {}


def test_an_input_its_task_cannot_read_fails_the_run(corpus, spark, tmp_path, monkeypatch):
    """A file listed on the driver that is not there when its task opens it (a path not on
    the worker, say): the run writes its tables and a red report, then fails."""
    good = sorted(corpus.glob("*.pcap"))[0]
    gone = tmp_path / "gone.pcap"
    monkeypatch.setattr(pipeline, "expand", lambda inputs: [str(good), str(gone)])
    out = tmp_path / "o"
    with pytest.raises(pipeline.UnreadableInputs, match=f"^{re.escape(str(gone))}: cannot "
                       f"open on .*No such file") as caught:
        pipeline.run(["whatever"], out, spark=spark)
    assert [u["capture"] for u in caught.value.result.unreadable] == [str(gone)]
    assert "\n" not in str(caught.value)
    report = json.loads((out / "report.json").read_text())
    assert [u["capture"] for u in report["unreadable"]] == [str(gone)]
    html = (out / "index.html").read_text()
    assert 'id="unreadable" class="error"' in html and str(gone) in html
    assert {Path(f["capture"]).name for f in _rows(out / "files")} == {good.name, gone.name}


def test_the_command_line_exits_2_when_nothing_could_be_read(tmp_path):
    """/proc/self/mem: a file the driver lists whose read fails in the task, for root too
    (as a worker's read of a path it cannot reach)."""
    if not Path("/proc/self/mem").is_file():
        pytest.skip("no /proc/self/mem")
    out = tmp_path / "o"
    done = subprocess.run([sys.executable, "-m", "mqconform.cli", "captures", "validate",
                           "/proc/self/mem", "--out", str(out), "--master", "local[1]"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: /proc/self/mem: cannot read")
    html = (out / "index.html").read_text()
    assert "No violation.</p>" not in html and 'class="error"' in html
