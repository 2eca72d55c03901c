"""The Python module `placer` (python/placer): load, plan, run, errors, cancel, the workspace and
notebook drawing, on the committed models (no PyTorch). CTest runs it with PYTHONPATH set to
build/python; by hand: PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python."""

import _thread
import json
import os
import pathlib
import threading
import time

import numpy as np
import pytest

import placer

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "resources" / "models"
TEST_MODELS = ROOT / "tests" / "models"
EXAMPLES = ROOT / "resources" / "examples"


@pytest.fixture
def workspace(tmp_path):
    return str(tmp_path / "workspace.db")


@pytest.fixture
def resnet(workspace):
    return placer.load(MODELS / "tiny_resnet.onnx", workspace=workspace)


def reference(name):
    return np.load(MODELS / f"{name}.input.npy"), np.load(MODELS / f"{name}.expected.npy")


# --- loading ---------------------------------------------------------------------------------


def test_load_reads_every_format(workspace):
    onnx = placer.load(MODELS / "tiny_resnet.onnx", workspace=workspace)
    assert onnx.format == "onnx" and onnx.name == "tiny_resnet"
    assert [i["name"] for i in onnx.inputs] == ["input"]
    assert onnx.inputs[0]["shape"] == [1, 3, 32, 32] and onnx.inputs[0]["dtype"] == "float32"
    assert onnx.op_counts["Conv"] >= 5 and len(onnx) == sum(onnx.op_counts.values())
    relay = placer.load(str(EXAMPLES / "residual_block.relay"), workspace=workspace)
    assert relay.format == "relay" and len(relay) > 5
    # A JSON graph, written by a plan and read back.
    path = pathlib.Path(workspace).with_name("graph.json")
    path.write_text(relay.plan().to_graph_json())
    assert placer.load(path, workspace=workspace).format == "json"


def test_open_dimensions_and_input_shapes(workspace):
    model = placer.load(TEST_MODELS / "dyn_encoder.onnx", workspace=workspace)
    assert model.inputs[0]["declared"] == ["batch", "seq", "16"]
    fixed = placer.load(TEST_MODELS / "dyn_encoder.onnx", input_shapes={"x": (2, 16, 16)},
                        workspace=workspace)
    assert fixed.inputs[0]["shape"] == [2, 16, 16]


# --- planning --------------------------------------------------------------------------------


def test_rules_and_fallback_place_every_node(resnet):
    plan = resnet.plan(devices="a:vcpu,b:vcpu", rules={"Conv": "a"}, fallback="b")
    compute = [n for n in plan.nodes if n["op"] not in ("constant", "parameter")]
    assert all(n["device"] == ("a" if n["op"] == "Conv" else "b") for n in compute)
    assert plan.copies and all(c["bytes"] > 0 for c in plan.copies)
    assert {m["device"] for m in plan.memory} == {"a", "b"}
    # Every op has a predicted time, and the plan a predicted latency.
    assert all(n["predicted_ms"] is not None for n in compute)
    assert plan.prediction["latency_ms"] > 0
    assert json.loads(plan.to_json())["nodes"] == plan.report["nodes"]


def test_pins_by_name_and_glob(resnet):
    plan = resnet.plan(devices=["a:vcpu", "b:vcpu"], default="a",
                       pins={"/layer3/*": "b", "/fc/Gemm": "b"})
    assert plan.device_of("/fc/Gemm") == "b"
    assert plan.device_of("/layer3/conv1/Conv") == "b"
    # Demand mode: unpinned ops follow their consumers, and say so.
    stem = next(n for n in plan.nodes if n["name"] == "/stem/stem.0/Conv")
    assert stem["device"] == "b" and "consum" in stem["reason"]
    pinned = [n for n in plan.nodes if n["pinned"]]
    assert {n["name"] for n in pinned} >= {"/fc/Gemm", "/layer3/conv1/Conv"}


def test_auto_mode_and_split(resnet, workspace):
    auto = resnet.plan(devices="a:vcpu,b:vcpu", mode="auto")
    assert auto.report["mode"] == "auto"
    assert all(n["device"] in ("a", "b") for n in auto.nodes)
    batch = placer.load(MODELS / "tiny_encoder_batch4.onnx", workspace=workspace)
    split = batch.plan(devices="a:vcpu,b:vcpu", split="*=a,b")
    assert split.report["replicas"] or split.report.get("splits") or split.copies
    x = np.load(MODELS / "tiny_encoder_batch4.input.npy")
    run = split.run(inputs={batch.inputs[0]["name"]: x}, iterations=2)
    np.testing.assert_allclose(run.outputs[batch.outputs[0]["name"]],
                               np.load(MODELS / "tiny_encoder_batch4.expected.npy"),
                               rtol=1e-3, atol=1e-4)


def test_shard(workspace):
    """shard= cuts the encoder's ops at batch 1 across two devices: the report lists each op's
    sharding and the collectives, and the run computes what one device does."""
    model = placer.load(MODELS / "tiny_encoder.onnx", workspace=workspace)
    plan = model.plan(devices="a:vcpu,b:vcpu", shard="*=a,b")
    region = plan.report["splits"][0]
    assert region["tensor"] and region["request"] == "*=a,b"
    held = {op["node"]: op["outputs"][0] for op in region["ops"]}
    assert any(h.startswith("S(") for h in held.values())
    assert any(c["kind"] == "AllReduce" and c["bytes"] > 0 for c in region["collectives"])
    x = np.load(MODELS / "tiny_encoder.input.npy")
    run = plan.run(inputs={model.inputs[0]["name"]: x}, iterations=1, record=False)
    np.testing.assert_allclose(run.outputs[model.outputs[0]["name"]],
                               np.load(MODELS / "tiny_encoder.expected.npy"),
                               rtol=1e-3, atol=1e-4)
    with pytest.raises(placer.PlacerError, match="--shard"):
        model.plan(devices="a:vcpu,b:vcpu", shard="*")


def test_micro_batches(workspace):
    model = placer.load(MODELS / "tiny_encoder_batch4.onnx", workspace=workspace)
    name = model.inputs[0]["name"]
    x = np.load(MODELS / "tiny_encoder_batch4.input.npy")
    plain = model.plan(devices="a:vcpu,b:vcpu", rules={"MatMul": "a"}, fallback="b")
    piped = model.plan(devices="a:vcpu,b:vcpu", rules={"MatMul": "a"}, fallback="b",
                       micro_batches=2)
    assert [n["device"] for n in piped.nodes] == [n["device"] for n in plain.nodes]
    assert any(s.get("micro_batches") == 2 for s in piped.report.get("splits", []))
    a = plain.run(inputs={name: x}, iterations=1, record=False).outputs
    b = piped.run(inputs={name: x}, iterations=1, record=False).outputs
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    with pytest.raises(placer.PlacerError, match="--micro-batches must be"):
        model.plan(micro_batches=0)
    # A saved plan keeps its micro-batches.
    piped.save("piped")
    again = placer.Workspace(workspace).load("piped", model=MODELS / "tiny_encoder_batch4.onnx")
    assert any(s.get("micro_batches") == 2 for s in again.report.get("splits", []))


def test_stream(workspace):
    """stream=N runs N batches stacked on axis 0 through the pipeline: each batch's outputs
    are those of the batch run alone, and the report gives items per second."""
    model = placer.load(MODELS / "tiny_encoder_batch4.onnx", workspace=workspace)
    name = model.inputs[0]["name"]
    x = np.load(MODELS / "tiny_encoder_batch4.input.npy")
    batches = [x, np.roll(x, 1, axis=1), x[::-1].copy()]  # ids: permuted, still in range
    plain = model.plan(devices="a:vcpu,b:vcpu", rules={"MatMul": "a"}, fallback="b")
    stream = model.plan(devices="a:vcpu,b:vcpu", rules={"MatMul": "a"}, fallback="b",
                        micro_batches=2, stream=3)
    assert any(s.get("stream_batches") == 3 for s in stream.report.get("splits", []))
    run = stream.run(inputs={name: np.concatenate(batches)}, iterations=2, record=False)
    figures = run.report["stream"]
    assert figures["batches"] == 3 and figures["batch"] == x.shape[0]
    assert figures["items_per_s"] > 0 and len(figures["batch_spans_ms"]) == 3
    for b, data in enumerate(batches):
        alone = plain.run(inputs={name: data}, iterations=1, record=False).outputs
        for key, value in alone.items():
            rows = value.shape[0]
            np.testing.assert_array_equal(run.outputs[key][b * rows:(b + 1) * rows], value)
    # A saved plan keeps its stream.
    stream.save("streamed")
    again = placer.Workspace(workspace).load("streamed", model=MODELS / "tiny_encoder_batch4.onnx")
    assert any(s.get("stream_batches") == 3 for s in again.report.get("splits", []))
    with pytest.raises(placer.PlacerError, match="--stream must be"):
        model.plan(stream=0)
    with pytest.raises(TypeError):
        model.plan(stream="2")


def test_automatic_pipeline_stages(resnet):
    """mode="auto" with micro_batches chooses contiguous stages and names them in a note."""
    plan = resnet.plan(devices="a:vcpu,b:vcpu", mode="auto", micro_batches=4)
    notes = [n for n in plan.notes if n.startswith("pipeline stages for 4 micro-batches")]
    assert notes, plan.notes
    # Contiguous stages: the ops in graph order change device at most once (whether two stages
    # pay depends on this machine's calibrated costs).
    compute = [n["device"] for n in plan.nodes if n["op"] not in ("parameter", "constant")]
    changes = sum(1 for x, y in zip(compute, compute[1:]) if x != y)
    assert changes <= 1, compute
    run = plan.run(iterations=1, reference=True)
    assert run.reference_check["ok"]


def test_a_call_runs_once_and_checks_and_records_nothing(resnet, workspace):
    """plan.run(inputs) in a loop is a call: one run, no reference run, no cost kept, unless
    asked; asked, it does both."""
    import sqlite3

    plan = resnet.plan(devices="a:vcpu,b:vcpu", rules={"Conv": "a"}, fallback="b")

    def kept():
        with sqlite3.connect(workspace) as db:
            return db.execute("SELECT COUNT(*) FROM costs").fetchone()[0]

    placer.Workspace(workspace).plans()  # the file made, with its tables
    before = kept()
    run = plan.run()
    assert run.reference_check is None
    assert len(run.latencies_ms) == 1
    assert kept() == before
    asked = plan.run(iterations=2, reference=True, record=True)
    assert asked.reference_check["ok"] and len(asked.latencies_ms) == 2
    assert kept() > before


def test_exports(resnet, tmp_path):
    plan = resnet.plan(devices="a:vcpu,b:vcpu", rules={"Conv": "a"}, fallback="b")
    path = tmp_path / "planned.onnx"
    plan.to_onnx(path)
    again = placer.load(path, workspace=str(tmp_path / "w.db"))
    assert again.op_counts["Conv"] == resnet.op_counts["Conv"]
    assert "digraph" in plan.to_dot()
    relay = placer.load(EXAMPLES / "residual_block.relay", workspace=str(tmp_path / "w.db"))
    text = relay.plan(devices="cpu:cpu,gpu:vcpu", pins={"%0": "gpu"}, default="cpu").to_relay()
    assert text.startswith('#[version = "0.0.5"]')
    assert "device_copy" in text and "virtual_device" in text
    with pytest.raises(placer.PlacerError, match="not a Relay operator"):
        plan.to_relay()


def test_devices_and_bytecode(resnet):
    names = [d["name"] for d in placer.devices()]
    assert "cpu" in names and all("description" in d for d in placer.devices())
    plan = resnet.plan(devices="a:vcpu,b:vcpu", rules={"Conv": "a"}, fallback="b")
    code = plan.bytecode()
    assert "invoke" in code.lower() and "copy" in code.lower()
    assert plan.bytecode(optimize=False) != code


def test_repr_svg_colours_nodes_by_device(resnet):
    plan = resnet.plan(devices="a:vcpu,b:vcpu", rules={"Conv": "a"}, fallback="b")
    svg = plan._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "/stem/stem.0/Conv" in svg
    colours = {c.lower() for c in __import__("re").findall(r'fill="(#[0-9a-fA-F]{6})"', svg)}
    assert len(colours) >= 2  # one per device at least
    assert "tiny_resnet" in repr(plan) and "copies" in repr(plan)


# --- running ---------------------------------------------------------------------------------


def test_run_matches_reference_and_numpy(resnet):
    x, expected = reference("tiny_resnet")
    plan = resnet.plan(devices="a:vcpu,b:vcpu", rules={"Conv": "a"}, fallback="b")
    run = plan.run(inputs={"input": x}, iterations=3, reference=True)
    out = run.outputs["output"]
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-5)
    assert run.reference_check["ok"]
    assert run.latency_ms > 0 and len(run.latencies_ms) == 3
    assert {n["device"] for n in run.nodes} == {"a", "b"}
    assert all(n["median_ms"] >= 0 for n in run.nodes)
    assert run.copies and all("median_ms" in c for c in run.copies)
    assert isinstance(run.idle, list)
    assert run.prediction["predicted_ms"] > 0 and run.prediction["measured_ms"] > 0
    # The outputs keep the run's memory alive after the Run is gone.
    del run
    np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-5)


def test_inputs_of_any_layout_and_random_inputs(resnet):
    x, expected = reference("tiny_resnet")
    plan = resnet.plan(devices="a:vcpu")
    fortran = np.asfortranarray(x)
    assert not fortran.flags["C_CONTIGUOUS"] or x.ndim < 2
    run = plan.run(inputs={"input": fortran}, iterations=1, record=False)
    np.testing.assert_allclose(run.outputs["output"], expected, rtol=1e-3, atol=1e-5)
    as_list = plan.run(inputs={"input": x.tolist()}, iterations=1, record=False)
    np.testing.assert_allclose(as_list.outputs["output"], expected, rtol=1e-3, atol=1e-5)
    # No inputs: seeded random data, the same for the same seed.
    a = plan.run(iterations=1, seed=7, record=False).outputs["output"].copy()
    b = plan.run(iterations=1, seed=7, record=False).outputs["output"]
    np.testing.assert_array_equal(a, b)


def test_dynamic_shapes_run_at_each_shape(workspace):
    model = placer.load(TEST_MODELS / "dyn_encoder.onnx", workspace=workspace)
    plan = model.plan(devices="a:vcpu,b:vcpu", rules={"MatMul": "a"}, fallback="b")
    for shape in ("1x4", "2x16", "3x33"):
        x = np.load(TEST_MODELS / f"dyn_encoder.{shape}.input.npy")
        run = plan.run(inputs={"x": x}, iterations=1, record=False)
        np.testing.assert_allclose(run.outputs["y"],
                                   np.load(TEST_MODELS / f"dyn_encoder.{shape}.expected.npy"),
                                   rtol=1e-3, atol=1e-4)


def test_data_dependent_shapes(workspace):
    model = placer.load(TEST_MODELS / "nonzero_select.onnx", workspace=workspace)
    plan = model.plan(devices="a:vcpu,b:vcpu", fallback="b", rules={"NonZero": "a"})
    for case in ("a", "b"):
        x = np.load(TEST_MODELS / f"nonzero_select.{case}.x.npy")
        run = plan.run(inputs={"x": x}, iterations=1, record=False)
        for name in ("y", "rows", "total"):
            expected = np.load(TEST_MODELS / f"nonzero_select.{case}.{name}.npy")
            assert run.outputs[name].shape == expected.shape
            np.testing.assert_allclose(run.outputs[name], expected, rtol=1e-4, atol=1e-5)


def test_trace_csv_and_saved_runs(resnet, tmp_path, workspace):
    plan = resnet.plan(devices="a:vcpu,b:vcpu", rules={"Conv": "a"}, fallback="b")
    run = plan.run(iterations=2)
    run.save_trace(tmp_path / "trace.json")
    events = json.loads((tmp_path / "trace.json").read_text())
    spans = [e for e in events["traceEvents"] if e.get("ph") == "X"]
    assert any("/stem/stem.0/Conv" in e["args"].get("node", "") for e in spans)
    run.save_csv(tmp_path / "times.csv")
    assert "/fc/Gemm" in (tmp_path / "times.csv").read_text()
    assert run.save("resnet") is True  # the plan saved first
    shown = placer.Workspace(workspace).show("resnet")
    assert shown["last_run"]["latency_ms"] == pytest.approx(run.latency_ms, rel=1e-3, abs=1e-4)
    assert "ran" in run.summary() or "latency" in run.summary()


def test_progress_and_cancel(resnet):
    plan = resnet.plan(devices="a:vcpu")
    seen = []
    plan.run(iterations=4, warmup=1, progress=lambda done, total: seen.append((done, total)),
             record=False, reference=False)
    assert seen[-1] == (5, 5) and len(seen) == 5

    def stop(done, total):
        if done == 2:
            raise ValueError("stop here")

    with pytest.raises(ValueError, match="stop here"):
        plan.run(iterations=50, progress=stop, record=False, reference=False)

    # Ctrl+C: KeyboardInterrupt once the run has stopped, long before it would have ended.
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        plan.run(iterations=10_000_000, record=False, reference=False)
    assert time.monotonic() - started < 30
    timer.join()
    # The session is free for the next run.
    assert plan.run(iterations=1, reference=True).reference_check["ok"]


def test_gil_is_released_while_running(resnet):
    plan = resnet.plan(devices="a:vcpu")
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    thread = threading.Thread(target=tick)
    thread.start()
    plan.run(iterations=3000, warmup=0, record=False, reference=False)
    stop.set()
    thread.join()
    assert len(ticks) > 10


# --- errors ----------------------------------------------------------------------------------


def test_errors_carry_the_cli_sentences(resnet, tmp_path, workspace):
    with pytest.raises(placer.PlacerError, match="cannot open file"):
        placer.load(tmp_path / "missing.onnx", workspace=workspace)
    bad = tmp_path / "bad.relay"
    bad.write_text('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float32]) {\n  ad(%x)\n}\n')
    with pytest.raises(placer.PlacerError, match=r"bad\.relay:3:"):
        placer.load(bad, workspace=workspace)
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07garbage\xff\xff")
    with pytest.raises(placer.PlacerError, match="garbage.onnx"):
        placer.load(garbage, workspace=workspace)
    with pytest.raises(placer.PlacerError, match="unknown kind 'tpu'"):
        resnet.plan(devices="a:tpu")
    with pytest.raises(placer.PlacerError, match="nosuch"):
        resnet.plan(devices="a:vcpu", pins={"/fc/Gemm": "nosuch"})
    with pytest.raises(placer.PlacerError, match="--mode must be"):
        resnet.plan(mode="fastest")
    plan = resnet.plan(devices="a:vcpu")
    with pytest.raises(placer.PlacerError, match="the data is 2x2 float32"):
        plan.run(inputs={"input": np.zeros((2, 2), np.float32)})
    with pytest.raises(placer.PlacerError, match="nosuch"):
        plan.run(inputs={"nosuch": np.zeros((1, 3, 32, 32), np.float32)})
    with pytest.raises(placer.PlacerError, match="iterations"):
        plan.run(iterations=0)
    with pytest.raises(placer.PlacerError):
        plan.run(mapping={"a": "quantum:0"})
    with pytest.raises(TypeError):
        placer.load(42)
    with pytest.raises(TypeError):
        resnet.plan(pins=[("a", 1)])
    with pytest.raises(placer.PlacerError, match="numpy type"):
        plan.run(inputs={"input": np.zeros((1, 3, 32, 32), np.complex64)})
    # After all of that, the model still plans and runs.
    assert plan.run(iterations=1, reference=True).reference_check["ok"]


# --- the workspace ---------------------------------------------------------------------------


def test_workspace_saves_lists_shows_loads_and_diffs(resnet, workspace):
    ws = placer.Workspace(workspace)
    by_rule = resnet.plan(devices="a:vcpu,b:vcpu", rules={"Conv": "a"}, fallback="b")
    on_one = resnet.plan(devices="a:vcpu,b:vcpu", default="a")
    ws.save(by_rule, "by-rule", note="convolutions on a")
    on_one.save("on-one", workspace=workspace)
    listed = {p["name"]: p for p in ws.plans()}
    assert set(listed) == {"by-rule", "on-one"}
    assert listed["by-rule"]["note"] == "convolutions on a"
    assert listed["by-rule"]["copies"] == len(by_rule.copies)
    shown = ws.show("by-rule")
    assert shown["differences"] == [] and shown["last_run"] is None
    devices = {n["name"]: n["device"] for n in shown["nodes"]}
    assert devices["/fc/Gemm"] == "b" and devices["/stem/stem.0/Conv"] == "a"
    loaded = ws.load("by-rule")
    assert [n["device"] for n in loaded.nodes] == [n["device"] for n in by_rule.nodes]
    with pytest.raises(placer.PlacerError, match=r"model=PATH"):
        loaded.run(iterations=1)  # a workspace keeps no weights
    runnable = ws.load("by-rule", model=MODELS / "tiny_resnet.onnx")
    assert [n["device"] for n in runnable.nodes] == [n["device"] for n in by_rule.nodes]
    assert runnable.run(iterations=1, reference=True).reference_check["ok"]
    with pytest.raises(placer.PlacerError, match="is not the model plan 'by-rule' was saved"):
        ws.load("by-rule", model=MODELS / "tiny_inception.onnx")
    diff = ws.diff("on-one", "by-rule")
    assert "/fc/Gemm: a -> b" in diff["moved_nodes"] and diff["copies_added"]
    assert diff["latency_ms"] == [None, None] and diff["node_time_changes"] == []
    # With a run of each, the diff compares them.
    runnable.run(iterations=2, record=False).save("by-rule")
    ws.load("on-one", model=MODELS / "tiny_resnet.onnx").run(iterations=2, record=False).save(
        "on-one")
    diff = ws.diff("on-one", "by-rule")
    assert all(latency > 0 for latency in diff["latency_ms"])
    assert diff["node_time_changes"] and "a_ms" in diff["node_time_changes"][0]
    ws.rename("on-one", "single")
    ws.delete("by-rule")
    assert [p["name"] for p in ws.plans()] == ["single"]
    with pytest.raises(placer.PlacerError, match="by-rule"):
        ws.show("by-rule")


def test_calibrate_keeps_the_calibration(tmp_path):
    path = str(tmp_path / "calibrated.db")
    calibration = placer.calibrate(quick=True, iterations=1, workspace=path)
    names = [d["name"] for d in calibration["devices"]]
    assert "cpu" in names and all(d["gflops"] > 0 for d in calibration["devices"])
    assert os.path.exists(path)


def test_import_is_quick_and_documented():
    assert placer.load.__doc__ and placer.Plan.run.__doc__ and placer.Model.plan.__doc__
    stub = pathlib.Path(placer.__file__).with_name("__init__.pyi")
    assert stub.exists() and "def run(" in stub.read_text()


def test_to_dataframe(resnet):
    pandas = pytest.importorskip("pandas", reason="Run.to_dataframe needs pandas (python3-pandas)")
    run = resnet.plan(devices="a:vcpu,b:vcpu", rules={"Conv": "a"}, fallback="b").run(
        iterations=2, record=False)
    frame = run.to_dataframe()
    assert isinstance(frame, pandas.DataFrame)
    assert set(frame["kind"]) == {"node", "copy"}
    assert len(frame) == len(run.nodes) + len(run.copies)
    assert frame["median_ms"].notna().all()


# --- generation ------------------------------------------------------------------------------


def _decoder():
    prompt = np.load(TEST_MODELS / "tiny_decoder.prompt.npy")
    expected = np.load(TEST_MODELS / "tiny_decoder.expected.npy")[0].tolist()
    return prompt, expected


def test_generate_gives_pytorchs_greedy_tokens_from_one_read(workspace):
    prompt, expected = _decoder()
    plan = placer.load(TEST_MODELS / "tiny_decoder.onnx", workspace=workspace).plan(
        devices="a:vcpu,b:vcpu", pins={"/blocks.1/*": "b"})
    seen = []
    made = plan.generate(prompt, max_new_tokens=64, on_token=lambda t, i: seen.append(t))
    assert made.tokens == expected and seen == expected
    assert made.stop_reason == "max-new-tokens"
    assert made.time_to_first_token_ms > 0 and made.tokens_per_second > 0
    assert made.latency_ms(99) >= made.latency_ms(50) > 0
    assert [s["tokens"] for s in made.report["steps"]][:2] == [32, 1]
    assert sorted(made.report["busy_per_token_ms"]) != []
    # Streamed: the same tokens, as they come; stopping early stops the generation.
    assert list(plan.stream(prompt, max_new_tokens=8)) == expected[:8]
    first = []
    for token in plan.stream(prompt, max_new_tokens=64):
        first.append(token)
        if len(first) == 3:
            break
    assert first == expected[:3]


def test_generation_leaves_out_a_failed_device_and_follows_a_slowed_one(workspace, monkeypatch):
    prompt, expected = _decoder()
    plan = placer.load(TEST_MODELS / "tiny_decoder.onnx", workspace=workspace).plan(
        devices="a:vcpu,b:vcpu", default="a", pins={"/blocks.1/*": "b"})
    monkeypatch.setenv("PLACER_FAULT", "b@5")
    made = plan.generate(prompt, max_new_tokens=64)
    assert made.tokens == expected
    (event,) = made.events
    assert event["kind"] == "device-failed" and event["iteration"] == 5
    assert event["reason"].startswith("b (vcpu2) failed at iteration 5")
    with pytest.raises(placer.PlacerError, match="vcpu2 failed"):
        plan.generate(prompt, max_new_tokens=64, failover=False)
    monkeypatch.delenv("PLACER_FAULT")
    monkeypatch.setenv("PLACER_SLOW", "a@10:4")
    slowed = placer.load(TEST_MODELS / "tiny_decoder.onnx", workspace=workspace).plan(
        devices="a:vcpu,b:vcpu", default="a")
    adapted = slowed.generate(prompt, max_new_tokens=40, adapt=True)
    assert adapted.tokens == expected[:40]
    # The re-placement for a's slowdown (noise on a busy machine may add others).
    moves = [e for e in adapted.events
             if e["kind"] == "replaced" and e["reason"].startswith("a (vcpu1) ")
             and e["nodes_moved"] > 0]
    assert moves, adapted.events
    assert "to b" in moves[0]["moved"]


def test_a_saved_decoder_plan_generates_the_same(workspace):
    prompt, expected = _decoder()
    plan = placer.load(TEST_MODELS / "tiny_decoder.onnx", workspace=workspace).plan(
        devices="a:vcpu,b:vcpu", pins={"/blocks.1/*": "b"})
    plan.save("decoder")
    again = placer.Workspace(workspace).load("decoder", model=TEST_MODELS / "tiny_decoder.onnx")
    assert again.device_of("/blocks.1/attn/q/MatMul") == "b"
    assert again.generate(prompt, max_new_tokens=64).tokens == expected


def test_a_generation_is_kept_in_the_workspace(workspace):
    prompt, expected = _decoder()
    plan = placer.load(TEST_MODELS / "tiny_decoder.onnx", workspace=workspace).plan(
        devices="a:vcpu")
    made = plan.generate(prompt, max_new_tokens=4)
    assert made.report["mapping"] == "a=vcpu1"
    assert made.save("decoder") is True  # the plan saved first
    assert plan.generate(prompt, max_new_tokens=2).save("decoder") is False
    shown = placer.Workspace(workspace).show("decoder")
    latest, first = shown["generations"]
    assert latest["new_tokens"] == 2 and first["new_tokens"] == 4
    assert first["prompt_tokens"] == len(prompt.reshape(-1))
    assert first["report"]["tokens"] == expected[:4]
    assert first["decode_tokens_per_s"] == pytest.approx(made.tokens_per_second)


def test_generate_refuses_bad_input_with_a_sentence(workspace):
    prompt, _ = _decoder()
    plan = placer.load(TEST_MODELS / "tiny_decoder.onnx", workspace=workspace).plan(
        devices="a:vcpu")
    bad = prompt.copy()
    bad[0, 3] = 500
    with pytest.raises(placer.PlacerError, match="token 3 is id 500, outside the vocabulary"):
        plan.generate(bad)
    with pytest.raises(placer.PlacerError, match="longer than the maximum length 8"):
        plan.generate(prompt, max_length=8)
    with pytest.raises(placer.PlacerError, match="cache pairing logits -> past_value_1"):
        plan.generate(prompt, bind={"logits": "past_value_1"})
    # Sampling with a seed is reproducible.
    a = plan.generate(prompt, max_new_tokens=8, temperature=1.0, top_k=20, seed=3).tokens
    assert a == plan.generate(prompt, max_new_tokens=8, temperature=1.0, top_k=20, seed=3).tokens


# --- profiles made elsewhere -----------------------------------------------------------------

def test_import_profile_puts_onnx_runtimes_times_on_the_nodes(resnet, workspace):
    profile = TEST_MODELS / "profiles" / "tiny_resnet.ort.json"
    imported = placer.import_profile(resnet, profile)
    assert imported["runs"] == 3
    assert imported["node_match_rate"] == 1.0
    stem = next(n for n in imported["nodes"] if n["name"] == "/stem/stem.0/Conv")
    assert stem["provider"] == "CPUExecutionProvider"
    assert stem["median_ms"] > 0
    assert "/stem/stem.2/Relu" in stem["fused"]
    assert all("layout" in e["why"] for e in imported["unmatched_events"])
    # A path works as well as a loaded model.
    again = placer.import_profile(MODELS / "tiny_resnet.onnx", profile, workspace=workspace)
    assert again["nodes"] == imported["nodes"]


def test_import_profile_of_another_model_says_so(resnet, tmp_path):
    with pytest.raises(placer.PlacerError, match="another model"):
        placer.import_profile(resnet, TEST_MODELS / "profiles" / "tiny_recurrent.ort.json")
    broken = tmp_path / "broken.json"
    broken.write_text('[{"cat": "Node", "name": "x_kernel_time", "dur": ')
    with pytest.raises(placer.PlacerError, match="not JSON"):
        placer.import_profile(resnet, broken)


# --- machines you do not have ----------------------------------------------------------------

def test_a_plan_for_a_machine_file_is_predicted_not_run(resnet):
    plan = resnet.plan(machine=ROOT / "resources" / "machines" / "2x8-h100.json", mode="auto")
    names = {d["name"] for d in plan.devices}
    assert "node1.cuda7" in names and "node0.cpu" in names
    assert plan.report["prediction"]["latency_ms"] > 0
    with pytest.raises(placer.PlacerError, match="2x8-h100"):
        plan.run()
    with pytest.raises(placer.PlacerError, match="leave devices"):
        resnet.plan(machine=ROOT / "resources" / "machines" / "2x8-h100.json", devices="a:cpu")
