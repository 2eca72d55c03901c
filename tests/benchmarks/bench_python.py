#!/usr/bin/env python3
"""What the Python module costs over the CLI: the same plan run by `placer run` and by
`plan.run` from Python, rounds alternating in order, on the same machine in the same run.

For each model it reports the median latency each way and their ratio (goal: Python within 5 %),
and how far the per-node medians differ (median over nodes of |python - cli| / cli); then what a
call in a loop costs, plan.run(inputs) once, against its run's own latency, for each model and
for a decoder's step (goal: at most 5 % of a step at 30M parameters; the bundled models' runs of
0.05-0.3 ms are shorter than a call's fixed cost). Then the time of `import placer` in a fresh
interpreter against `import numpy` (goal: at most 0.3 s).
Exits non-zero when a run fails or gives other outputs than the reference.

  PYTHONPATH=build/python /usr/bin/python3 tests/benchmarks/bench_python.py \\
      --placer build/app/placer [--quick] [--rounds N] [--iterations K] [MODEL.onnx ...]

Without models it takes resources/models/*.onnx and, where $PLACER_ONNX_MODELS names a folder
(scripts/export_models.py checked DIR), resnet50_batch8.onnx and transformer_encoder.onnx there.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cli_run(placer, model, devices, iterations, workspace):
    """The same plan through `placer run`: the same devices and rules."""
    done = subprocess.run(
        [placer, "run", str(model), "--devices", devices, "--rule", "Conv=a", "--rule", "MatMul=a",
         "--rule", "Gemm=a", "--fallback", "b", "--iterations", str(iterations), "--json",
         "--no-reference", "--no-record", "--db", workspace],
        capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_python: placer run {model} failed: {done.stderr.strip()}")
    report = json.loads(done.stdout)
    return report["latency_ms"]["median"], {n["name"]: n["median_ms"] for n in report["nodes"]}


def python_run(plan, iterations):
    run = plan.run(iterations=iterations, reference=False, record=False)
    return run.latency_ms, {n["name"]: n["median_ms"] for n in run.nodes}


def run_input(info):
    """Seeded data for a model input of fixed shape, as placer run makes it."""
    import numpy as np
    shape = [d if isinstance(d, int) and d > 0 else 1 for d in info["shape"]]
    rng = np.random.default_rng(1)
    if info["dtype"].startswith("float"):
        return rng.uniform(-1, 1, shape).astype(info["dtype"])
    return rng.integers(0, 4, shape).astype(info["dtype"])


def call_cost(plan, inputs, calls):
    """plan.run(inputs) in a loop after three calls: the median wall time of a call and the
    median latency of its run, in ms."""
    for _ in range(3):
        plan.run(inputs)
    walls, latencies = [], []
    for _ in range(calls):
        started = time.perf_counter()
        made = plan.run(inputs)
        walls.append((time.perf_counter() - started) * 1000)
        latencies.append(made.latency_ms)
    return statistics.median(walls), statistics.median(latencies)


def import_time(statement, repeats):
    times = []
    for _ in range(repeats):
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", statement], check=True,
                       env=dict(os.environ))
        times.append(time.monotonic() - started)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--placer", default=str(ROOT / "build" / "app" / "placer"))
    parser.add_argument("--quick", action="store_true", help="one small model, two rounds")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--decoder", action="append", default=[],
                        help="a decoder whose step a call in a loop runs (default: "
                             "$PLACER_ONNX_MODELS/decoder30m.onnx, else tests/models/"
                             "tiny_decoder.onnx)")
    parser.add_argument("models", nargs="*")
    args = parser.parse_args()

    import placer

    models = [pathlib.Path(m) for m in args.models]
    if not models:
        models = sorted((ROOT / "resources" / "models").glob("*.onnx"))
        extra = os.environ.get("PLACER_ONNX_MODELS")
        if extra:
            models += [pathlib.Path(extra) / f for f in ("resnet50_batch8.onnx",
                                                        "transformer_encoder.onnx")
                       if (pathlib.Path(extra) / f).exists()]
    if args.quick:
        models, args.rounds, args.iterations = models[:1], 2, 3

    workspace = tempfile.mkdtemp(prefix="bench_python.")
    db = os.path.join(workspace, "workspace.db")
    devices = "a:vcpu,b:vcpu"
    print(f"{'model':<24} {'cli ms':>10} {'python ms':>10} {'ratio':>7} {'node diff':>10}")
    ratios = []
    for model in models:
        loaded = placer.load(model, workspace=db)
        # Two devices, the convolutions and matrix products on the first.
        plan = loaded.plan(devices=devices, rules={"Conv": "a", "MatMul": "a", "Gemm": "a"},
                           fallback="b")
        cli_latency, py_latency = [], []
        cli_nodes, py_nodes = {}, {}
        python_run(plan, 1)  # the first run loads weights and prepares kernels
        for round_ in range(args.rounds):
            order = ("cli", "python") if round_ % 2 == 0 else ("python", "cli")
            for way in order:
                if way == "cli":
                    latency, nodes = cli_run(args.placer, model, devices, args.iterations, db)
                    cli_latency.append(latency)
                    for k, v in nodes.items():
                        cli_nodes.setdefault(k, []).append(v)
                else:
                    latency, nodes = python_run(plan, args.iterations)
                    py_latency.append(latency)
                    for k, v in nodes.items():
                        py_nodes.setdefault(k, []).append(v)
        c, p = statistics.median(cli_latency), statistics.median(py_latency)
        if set(cli_nodes) != set(py_nodes):
            sys.exit(f"bench_python: {model.name}: the CLI and Python ran different nodes")
        differences = [abs(statistics.median(py_nodes[k]) - statistics.median(v)) /
                       statistics.median(v)
                       for k, v in cli_nodes.items() if statistics.median(v) >= 0.005]
        node_diff = statistics.median(differences) if differences else 0.0
        ratios.append(p / c)
        print(f"{model.stem:<24} {c:>10.3f} {p:>10.3f} {p / c:>7.3f} {node_diff:>9.1%}")
    if len(ratios) > 1:
        print(f"geometric mean of python / cli: {statistics.geometric_mean(ratios):.3f}")

    # A call in a loop, as a notebook makes one: plan.run(inputs) once, its wall time against
    # its own run's latency (goal: the call costs at most 5 % over its kernels).
    calls = 20 if args.quick else 300
    print(f"{'model':<24} {'call ms':>10} {'run ms':>10} {'overhead':>9}  (plan.run(inputs), "
          f"median of {calls} calls, one vcpu)")
    for model in models:
        loaded = placer.load(model, workspace=db)
        plan = loaded.plan(devices="a:vcpu")
        inputs = {i["name"]: run_input(i) for i in loaded.inputs}
        wall, latency = call_cost(plan, inputs, calls)
        print(f"{model.stem:<24} {wall:>10.3f} {latency:>10.3f} {(wall - latency) / wall:>9.1%}")

    # A decoder's step as a notebook calls it (scripts/make_decoder_model.py's decoders: ids
    # and an explicit cache): one new token over a cache of 32 positions.
    decoders = [pathlib.Path(d) for d in args.decoder]
    extra = os.environ.get("PLACER_ONNX_MODELS")
    if not decoders and extra and (pathlib.Path(extra) / "decoder30m.onnx").exists():
        decoders = [pathlib.Path(extra) / "decoder30m.onnx"]
    if not decoders:
        decoders = [ROOT / "tests" / "models" / "tiny_decoder.onnx"]
    import numpy as np
    for model in decoders:
        loaded = placer.load(model, workspace=db)
        plan = loaded.plan(devices="a:vcpu")
        rng = np.random.default_rng(1)
        inputs = {}
        for info in loaded.inputs:
            past = "past" in info["name"]
            shape = [d if isinstance(d, int) and d > 0 else (32 if past else 1)
                     for d in info["shape"]]
            if info["dtype"].startswith("float"):
                inputs[info["name"]] = rng.uniform(-1, 1, shape).astype(info["dtype"])
            else:
                inputs[info["name"]] = np.zeros(shape, dtype=info["dtype"])
        wall, latency = call_cost(plan, inputs, calls)
        print(f"{model.stem + ' step':<24} {wall:>10.3f} {latency:>10.3f} "
              f"{(wall - latency) / wall:>9.1%}")

    # A run with the reference check, so that a wrong result fails the benchmark.
    check = placer.load(models[0], workspace=db).plan(devices=devices).run(iterations=1,
                                                                          reference=True)
    if not check.reference_check["ok"]:
        sys.exit("bench_python: the outputs differ from the reference")

    repeats = 3 if args.quick else 7
    numpy_s = import_time("import numpy", repeats)
    placer_s = import_time("import placer", repeats)
    print(f"import placer: {placer_s:.3f} s (import numpy alone: {numpy_s:.3f} s; "
          f"placer's own share {placer_s - numpy_s:+.3f} s)")


if __name__ == "__main__":
    main()
