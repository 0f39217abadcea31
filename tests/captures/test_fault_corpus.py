"""The independent fault corpus (conformance/faultcorpus.py: the golden pcaps with one server
answer edited in place per file) through ``mqconform captures validate``'s job on Spark: each
faulty call flagged, at that call, with a requirement its kind breaks (recall >= 95 %), and no
violation on the clean captures beyond what their sidecars list (0 false positives). The
per-kind table is printed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mqconform.captures import decode, expected, pipeline
from mqconform.conformance import faultcorpus
from mqconform.server.faults import FAULTS

GOLDEN = faultcorpus.GOLDEN


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("faults")
    labels = faultcorpus.build(out)
    return out, labels


def test_the_corpus_has_thirty_kinds_none_of_them_a_seeded_servers(corpus):
    _, labels = corpus
    made = {name for name, k in labels["kinds"].items() if k["sites"]}
    assert len(made) >= 30
    assert not made & set(FAULTS)
    for f in labels["faults"]:
        assert f["requirements"] == labels["kinds"][f["kind"]]["requirements"]
    # one edited call, one kind: no two faulty files alike (the validator would count a copy
    # once)
    contents = [Path(f["capture"]).read_bytes() for f in labels["faults"]]
    assert len(set(contents)) == len(contents)


def test_edits_keep_the_framing_the_decoder_and_tshark_read(corpus):
    _, labels = corpus
    for f in labels["faults"]:
        source = decode.decode_all([f["source"]])
        edited = decode.decode_all([f["capture"]])
        assert len(edited.calls) == len(source.calls), f["capture"]
        assert [e.kind for e in edited.errors] == [e.kind for e in source.errors], f["capture"]
        assert Path(f["capture"]).stat().st_size == Path(f["source"]).stat().st_size
    if shutil.which("tshark"):
        for f in labels["faults"][::7]:
            done = subprocess.run(["tshark", "-r", f["capture"]], capture_output=True,
                                  text=True, timeout=60)
            assert done.returncode == 0 and "DCERPC" in done.stdout, done.stderr


@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17")
def test_validate_flags_the_faulty_calls_and_nothing_on_the_clean_captures(corpus, tmp_path):
    out, labels = corpus
    session = pipeline.session("local[2]")
    try:
        pipeline.run([str(out), str(GOLDEN)], tmp_path / "v", spark=session)
    finally:
        session.stop()
    violations = pq.read_table(str(tmp_path / "v" / "violations")).to_pylist()
    result = faultcorpus.score(labels, violations)
    print("\n" + faultcorpus.table(result))
    for m in result["missed"]:
        print(f"  missed: {m['kind']} {m['capture']} call_id {m['call_id']}: {m['detail']}")

    clean = {str(p) for p in faultcorpus.clean_captures()}
    wanted: set = set()
    for path in clean:
        wanted |= expected.keys(path, expected.load(path) or [])
    unexpected = [v for v in violations if v["capture"] in clean
                  and expected.violation_key(v["capture"], v["request_frame"],
                                             v["requirement"]) not in wanted]
    print(f"clean captures: {len(clean)}, violations beyond their sidecars: {len(unexpected)}")
    assert unexpected == []
    assert result["kinds"] >= 30
    assert result["recall"] >= 0.95, json.dumps(result["missed"], indent=1, default=str)
