"""Placement Explorer from Python: load a dataflow graph, plan where each operator runs, run it.

    >>> import placer
    >>> model = placer.load("tiny_resnet.onnx")
    >>> plan = model.plan(devices="a:vcpu,b:vcpu", rules={"Conv": "a"}, fallback="b")
    >>> plan.nodes[0]["device"], len(plan.copies)
    >>> run = plan.run(iterations=20, reference=True)
    >>> run.latency_ms, run.reference_check["ok"]

Everything goes through the same session as the ``placer`` command and the
``placement-explorer`` GUI: the same formats (ONNX, Relay text, JSON graphs), the same option
spellings, and errors raised as :class:`PlacerError` with the sentences the CLI prints.
Planning and running release the GIL; Ctrl+C cancels a run between steps.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _placer
from ._placer import PlacerError

__all__ = [
    "PlacerError",
    "Model",
    "Plan",
    "Run",
    "Workspace",
    "load",
    "import_profile",
    "calibrate",
    "devices",
    "default_workspace",
]
__version__: str = _placer.__version__

PathLike = Union[str, "os.PathLike[str]"]

_sessions: Dict[str, "_placer.Session"] = {}


def default_workspace() -> str:
    """The workspace file used when none is given:
    $XDG_DATA_HOME (or ~/.local/share)/placement-explorer/workspace.db."""
    return _placer.default_workspace()


def _workspace_path(workspace: Optional[PathLike]) -> str:
    if isinstance(workspace, Workspace):
        return workspace.path
    return os.fspath(workspace) if workspace else default_workspace()


def _session(workspace: Optional[PathLike]) -> "_placer.Session":
    """One session per workspace file: its physical devices and caches live as long as the
    module."""
    path = _workspace_path(workspace)
    session = _sessions.get(path)
    if session is None:
        session = _sessions[path] = _placer.Session(path)
    return session


def _path(path: PathLike) -> str:
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"a model path must be a str or os.PathLike, not {type(path).__name__}")
    return os.fsdecode(os.fspath(path))


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def _assignments(name: str, value: Any) -> List[str]:
    """{"conv1": "gpu"} or ["conv1=gpu"] or "conv1=gpu" as ["conv1=gpu"]."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [f"{_text(name + ' key', k)}={_text(name + ' value', v)}" for k, v in value.items()]
    if isinstance(value, Iterable):
        return [_text(name + " item", v) for v in value]
    raise TypeError(f"{name} must be a dict, a list of 'A=B' strings or one such string")


def _devices_text(devices: Any) -> str:
    if isinstance(devices, str):
        return devices
    if isinstance(devices, Iterable):
        return ",".join(_text("each device", d) for d in devices)
    raise TypeError("devices must be a str such as 'a:vcpu,b:vcpu' or a list of such entries")


def _shape_options(input_shapes: Optional[Mapping[str, Sequence[int]]]) -> List[tuple]:
    options = []
    for name, shape in (input_shapes or {}).items():
        dims = ",".join(str(int(d)) for d in shape)
        options.append(("input-shape", f"{_text('an input name', name)}={dims}"))
    return options


def _array(name: str, value: Any) -> Any:
    """What the native part takes for an input: a C-contiguous numeric array (the user's own
    memory where it already is one), or a .npy file's bytes for strings."""
    array = np.asarray(value)
    if array.dtype.kind in "USO":
        if array.dtype.kind == "O":
            array = array.astype(str)
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        return buffer.getvalue()
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return np.ascontiguousarray(array)


def _inputs(inputs: Optional[Mapping[str, Any]], dtypes: Optional[Mapping[str, str]] = None) -> List[tuple]:
    """Inputs for the native part. An array keeps its type (a wrong one is an error); a list or
    a number takes the type of the model's input."""
    if inputs is None:
        return []
    if not isinstance(inputs, Mapping):
        raise TypeError("inputs must be a dict from input name to array")
    out = []
    for name, value in inputs.items():
        name = _text("an input name", name)
        dtype = (dtypes or {}).get(name)
        if not isinstance(value, np.ndarray) and dtype in _NUMPY_TYPES:
            value = np.asarray(value, dtype=_NUMPY_TYPES[dtype])
        out.append((name, _array(name, value)))
    return out


# The model's element types that numpy has (bfloat16 is given as uint16 bit patterns).
_NUMPY_TYPES = {
    "float32": np.float32, "float16": np.float16, "float64": np.float64, "int8": np.int8,
    "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
    "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bool": np.bool_,
    "bfloat16": np.uint16,
}


def _maps(mapping: Optional[Mapping[str, str]]) -> List[tuple]:
    if mapping is None:
        return []
    if not isinstance(mapping, Mapping):
        raise TypeError("mapping must be a dict from virtual device to physical device")
    return [(_text("a virtual device", k), _text("a physical device", v)) for k, v in mapping.items()]


def load(
    path: PathLike,
    input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
    format: Optional[str] = None,
    workspace: Optional[PathLike] = None,
) -> "Model":
    """Reads a model: ONNX (.onnx), Relay text (.relay) or a JSON graph (.json).

    ``input_shapes`` fixes inputs whose dimensions the model leaves open, e.g.
    ``{"input": (8, 3, 224, 224)}``; without it they are planned at 1, or at the shapes of the
    data a run gives. ``format`` ("onnx", "relay", "json") overrides the file's extension.
    Raises :class:`PlacerError` with the file and place of what is wrong.
    """
    options = _shape_options(input_shapes)
    if format is not None:
        options.append(("format", _text("format", format)))
    path = _path(path)
    handle = _session(workspace).load(path, options)
    return Model(path, options, handle, workspace)


def import_profile(model: Union["Model", PathLike], profile: PathLike,
                   workspace: Optional[PathLike] = None) -> dict:
    """Puts a profile made elsewhere on a model's nodes, as ``placer profile import --json``:
    ONNX Runtime's profile JSON (``enable_profiling``), its node events matched to the model's
    nodes (the names its optimisations give them taken back, fused nodes mapped to their
    members). Returns the runs, the match rate, each matched node's ``median_ms``, ``provider``
    and ``fused`` members, and the ``unmatched_events`` and ``missing_nodes`` with why. Raises
    :class:`PlacerError` for a file that is no profile, or a profile of another model."""
    if not isinstance(model, Model):
        model = load(model, workspace=workspace)
    elif workspace is None:
        workspace = model._workspace
    return _session(workspace).import_profile(model._handle, _path(profile))


def calibrate(quick: bool = False, iterations: int = 5, workspace: Optional[PathLike] = None) -> dict:
    """Measures this machine's devices (the host CPU, virtual CPUs, every CUDA GPU) and keeps the
    calibration in the workspace, where auto placement reads it. Returns what was measured."""
    return _session(workspace).calibrate(bool(quick), int(iterations))


def devices(workspace: Optional[PathLike] = None) -> List[dict]:
    """The physical devices this machine has for a run's ``mapping`` (``placer devices``): the
    host cpu, virtual CPU contexts (vcpuN, made on demand) and CUDA GPUs, each with whether it is
    available and what it is (or why it is absent)."""
    return _placer.devices(_session(workspace))


class Model:
    """A loaded model: its inputs, outputs and ops. :meth:`plan` places it."""

    def __init__(self, path: str, options: list, handle: Any, workspace: Optional[PathLike]):
        self.path = path
        self._options = options
        self._handle = handle
        self._workspace = workspace
        self._info = handle.info()

    @property
    def name(self) -> str:
        return self._info["name"]

    @property
    def format(self) -> str:
        return self._info["format"]

    @property
    def inputs(self) -> List[dict]:
        """Each graph input: name, shape (as planned), dtype, and ``declared`` dimensions where
        the model leaves some open ("batch", "?")."""
        return self._info["inputs"]

    @property
    def outputs(self) -> List[dict]:
        return self._info["outputs"]

    @property
    def op_counts(self) -> Dict[str, int]:
        return self._info["op_counts"]

    @property
    def warnings(self) -> List[str]:
        return self._info["warnings"]

    def __len__(self) -> int:
        """The number of operators (compute nodes)."""
        return self._info["ops"]

    def __repr__(self) -> str:
        return (
            f"<placer.Model {self.name!r} ({self.format}): {len(self)} ops, "
            f"inputs {[i['name'] for i in self.inputs]}, outputs {[o['name'] for o in self.outputs]}>"
        )

    def plan(
        self,
        devices: Union[str, Sequence[str], None] = None,
        default: Optional[str] = None,
        pins: Optional[Mapping[str, str]] = None,
        rules: Union[Mapping[str, str], Sequence[str], None] = None,
        fallback: Optional[str] = None,
        mode: Optional[str] = None,
        split: Union[str, Sequence[str], None] = None,
        shard: Union[str, Sequence[str], None] = None,
        constants: Optional[str] = None,
        workspace: Optional[PathLike] = None,
        host: Optional[str] = None,
        fixed_pins: Optional[Mapping[str, str]] = None,
        mapping: Optional[Mapping[str, str]] = None,
        optimize: bool = True,
        inputs: Optional[Mapping[str, Any]] = None,
        micro_batches: Optional[int] = None,
        stream: Optional[int] = None,
        machine: Optional[PathLike] = None,
    ) -> "Plan":
        """Plans where every node runs, as ``placer plan`` does.

        devices: "NAME:KIND[:mem=SIZE][:dtype=bf16|f16][:ordinal=N],..." or a list of such entries (kinds cpu,
            vcpu, cuda); default: the model's own, else cpu:cpu,gpu:cuda.
        default, host: the default and host devices.
        pins: node name, alias or glob -> device ({"conv1": "a", "layer3*": "b"}).
        rules: op name or glob -> device ({"Conv": "a"}), or ["Conv=a", ...].
        fallback: the device of ops no rule covers.
        mode: "demand" (default), "unify" or "auto" (placed by the cost model).
        split: "NODES=DEV[:SHARE],DEV[:SHARE]" or a list of them: regions run data-parallel.
        shard: the same spelling, or a list: regions cut inside their ops across the devices,
            each holding its share of the weights (``placer plan --shard``); the plan's
            ``report["splits"]`` lists each op's sharding and the collectives with their bytes.
        constants: "replicate" (default) or "copy".
        mapping: virtual -> physical device for auto mode's costs, as for :meth:`Plan.run`.
        inputs: the data a run will give, so that open dimensions are planned at its shapes.
        micro_batches: pipeline the plan: the batch is cut into this many micro-batches that
            flow through the devices, each device working on one while the next works on the
            one before (``placer run --micro-batches``).
        stream: throughput mode: this many batches back to back through the pipeline, every
            input the batches stacked on axis 0 (``placer run --stream``); the run's
            ``report["stream"]`` gives items per second and each batch's latency.
        machine: a machine file (``placer plan --machine``): plan for that machine, its devices
            the plan's and its rates the costs; such a plan is predicted, not run here.
        """
        options = list(self._options)
        if machine is not None:
            if devices is not None:
                raise PlacerError("machine= gives the devices; leave devices= out")
            options.append(("machine", _path(machine)))
        if devices is not None:
            options.append(("devices", _devices_text(devices)))
        for name, value in (("default", default), ("host", host), ("fallback", fallback),
                            ("mode", mode), ("constants", constants)):
            if value is not None:
                options.append((name, _text(name, value)))
        options += [("pin", p) for p in _assignments("pins", pins)]
        options += [("pin-fixed", p) for p in _assignments("fixed_pins", fixed_pins)]
        options += [("rule", r) for r in _assignments("rules", rules)]
        options += [("split", s) for s in _assignments("split", split)]
        options += [("shard", s) for s in _assignments("shard", shard)]
        if micro_batches is not None:
            if isinstance(micro_batches, bool) or not isinstance(micro_batches, int):
                raise TypeError("micro_batches must be an int")
            options.append(("micro-batches", str(micro_batches)))
        if stream is not None:
            if isinstance(stream, bool) or not isinstance(stream, int):
                raise TypeError("stream must be an int")
            options.append(("stream", str(stream)))
        workspace = workspace if workspace is not None else self._workspace
        handle = _session(workspace).plan(self.path, options, _maps(mapping), bool(optimize),
                                          _inputs(inputs))
        return Plan(self, handle, workspace, dict(mapping or {}))


class Plan:
    """A plan: where each node runs and why, the copies it needs, conflicts, memory per device
    and the predicted schedule. :meth:`run` runs it."""

    def __init__(self, model: Optional[Model], handle: Any, workspace: Optional[PathLike],
                 mapping: Optional[Dict[str, str]] = None):
        self.model = model
        self._handle = handle
        self._workspace = workspace
        self._mapping = mapping or {}
        self._report = handle.report()
        # The name of a plan read from a workspace without its model file (it has no weights).
        self._stored_without_model: Optional[str] = None
        self._input_dtypes: Optional[Dict[str, str]] = None

    @property
    def report(self) -> dict:
        """The plan report, as ``placer plan --json`` writes it."""
        return self._report

    @property
    def devices(self) -> List[dict]:
        return self._report["devices"]

    @property
    def nodes(self) -> List[dict]:
        """Every node in topological order: name, op, device, pinned, reason, decided_by, and
        predicted_ms for the ops the prediction times."""
        nodes = self._report["nodes"]
        for node in nodes:
            node.setdefault("decided_by", None)
            node.setdefault("predicted_ms", None)
        return nodes

    def device_of(self, node: str) -> str:
        """The device of the node called ``node`` (its name or an alias)."""
        for entry in self._report["nodes"]:
            if entry["name"] == node or node in entry.get("aliases", ()):
                return entry["device"]
        raise KeyError(f"no node called '{node}'")

    @property
    def copies(self) -> List[dict]:
        """The device copies the placement needs: value, from, to, bytes, consumers."""
        return self._report["copies"]

    @property
    def conflicts(self) -> List[dict]:
        return self._report["conflicts"]

    @property
    def notes(self) -> List[str]:
        return self._report["notes"]

    @property
    def memory(self) -> List[dict]:
        """Per device: peak_bytes, live_bytes and its storages."""
        return self._report["memory"]

    @property
    def prediction(self) -> Optional[dict]:
        """The predicted schedule: latency, busy time per device (from the workspace's
        calibration and measured node times, else assumed rates)."""
        return self._report.get("prediction")

    @property
    def warnings(self) -> List[str]:
        return self._handle.warnings()

    def summary(self) -> str:
        """The readable report, as ``placer plan`` prints it."""
        return self._handle.summary()

    def to_json(self) -> str:
        """The plan report as JSON text (``placer plan --emit json``)."""
        return json.dumps(self._report)

    def to_relay(self) -> str:
        """The planned program as Relay text with on_device and device_copy (Relay models)."""
        return self._handle.relay()

    def to_onnx(self, path: PathLike) -> None:
        """Writes the planned ONNX model: devices and pins in its metadata, copies as DeviceCopy
        nodes (ONNX models)."""
        self._handle.onnx(_path(path))

    def to_graph_json(self) -> str:
        """The planned graph as a JSON graph (``placer plan --emit graph``)."""
        return self._handle.graph_json()

    def to_dot(self) -> str:
        """Graphviz DOT text of the planned graph, nodes coloured by device."""
        return self._handle.dot()

    def bytecode(self, mapping: Optional[Mapping[str, str]] = None, optimize: bool = True) -> str:
        """What a run of the plan executes, as ``placer compile`` prints it: the graph optimised
        for the physical devices ``mapping`` names (or the plan's own with ``optimize=False``)
        lowered to the runtime's register bytecode."""
        if mapping is None:
            mapping = self._mapping
        return self._handle.bytecode(_session(self._workspace), _maps(mapping), bool(optimize))

    def svg(self) -> str:
        """The planned graph drawn by Graphviz as SVG, nodes coloured by device."""
        return self._handle.svg()

    def _repr_svg_(self) -> Optional[str]:
        # Graphviz's dot takes minutes past a few thousand nodes: a notebook shows the text then.
        if len(self._report["nodes"]) > 2000:
            return None
        return self.svg()

    def __repr__(self) -> str:
        counts: Dict[str, int] = {}
        for node in self._report["nodes"]:
            counts[node["device"]] = counts.get(node["device"], 0) + 1
        placed = ", ".join(f"{d}: {n}" for d, n in counts.items())
        return (
            f"<placer.Plan {self._report['graph']!r} ({self._report['mode']}): {placed}; "
            f"{len(self.copies)} copies, {len(self.conflicts)} conflicts>"
        )

    def save(self, name: str, note: str = "", workspace: Optional[PathLike] = None) -> None:
        """Saves the plan in the workspace under ``name`` (replacing one of that name)."""
        path = _workspace_path(workspace if workspace is not None else self._workspace)
        _placer.workspace_save(path, self._handle, _text("name", name), _text("note", note))

    def run(
        self,
        inputs: Optional[Mapping[str, Any]] = None,
        iterations: int = 1,
        warmup: int = 0,
        mapping: Optional[Union[Mapping[str, str], str]] = None,
        reference: bool = False,
        optimize: bool = True,
        seed: int = 1,
        atol: float = 1e-4,
        rtol: float = 1e-3,
        record: bool = False,
        progress: Optional[Callable[[int, int], None]] = None,
        adapt: bool = False,
        failover: bool = True,
    ) -> "Run":
        """Runs the plan for real, as ``placer run`` does: every virtual device on a physical
        one, concurrently, with the copies between them.

        A call runs the model once and checks nothing, as a call in a loop should: ask for
        ``iterations``/``warmup`` to measure, ``reference=True`` to check the outputs against
        one device, and ``record=True`` to keep the times in the cost table.

        inputs: input name -> array (numpy or array-like); inputs not given get seeded random
            data. Arrays are read in place where they are C-contiguous. Open dimensions take the
            arrays' shapes (the model is planned again for them, once per shape).
        mapping: virtual device -> physical: "cpu", "cpu:threads=N", "vcpuN", "cuda:N"; or
            "auto" (``placer run --map auto``): by what the machine has free now, vcpus bound
            to the least busy cores; ``run.devices`` says why each went where it did.
        adapt: re-place the work between iterations when a device stays slower or faster
            than the plan assumed (``run.events`` lists each change and why).
        failover: a device that fails mid-run is left out and the iteration run again on the
            devices left (False: the run raises :class:`PlacerError`).
        reference: also run the graph unoptimised on one device and compare the outputs
            (``run.reference_check``); a mismatch raises :class:`PlacerError`.
        record: keep the nodes' median times in the workspace's cost table.
        progress: called as progress(done, total) after each iteration.
        Ctrl+C cancels the run between steps and raises KeyboardInterrupt.
        """
        if mapping is None:
            mapping = self._mapping
        by_load = isinstance(mapping, str) and mapping == "auto"
        if isinstance(mapping, str) and not by_load:
            raise TypeError("mapping must be a dict from virtual device to physical device, or 'auto'")
        if by_load:
            mapping = None
        session = _session(self._workspace)
        if self._input_dtypes is None:
            self._input_dtypes = {i["name"]: i["dtype"] for i in self._handle.info()["inputs"]}
        dtypes = self._input_dtypes
        try:
            handle = session.run(self._handle, _inputs(inputs, dtypes), _maps(mapping),
                                 int(iterations), int(warmup), int(seed), bool(reference),
                                 bool(optimize), float(atol), float(rtol), progress, by_load,
                                 bool(adapt), bool(failover))
        except PlacerError as error:
            name = self._stored_without_model
            if name is not None and "has no data" in str(error):
                raise PlacerError(
                    f"{error}: plan '{name}' was read from the workspace, which keeps no weights; "
                    f"Workspace.load('{name}', model=PATH) reads them from the model file"
                ) from None
            raise
        result = Run(self, handle, self._workspace)
        if record and not handle.cancelled():
            session.record_costs(handle)
        check = result.reference_check if reference else None
        if check is not None and not check["ok"]:
            raise PlacerError("the outputs differ from the single-device reference: "
                              + check.get("mismatch", ""))
        return result

    def generate(
        self,
        prompt: Any,
        max_new_tokens: int = 32,
        max_length: int = 0,
        temperature: float = 0.0,
        top_k: int = 0,
        top_p: float = 1.0,
        seed: int = 1,
        stop: Iterable[int] = (),
        mapping: Optional[Mapping[str, str]] = None,
        optimize: bool = True,
        ids_input: str = "",
        logits: str = "",
        bind: Optional[Mapping[str, str]] = None,
        on_token: Optional[Callable[[int, int], Optional[bool]]] = None,
        check: bool = True,
        adapt: bool = False,
        failover: bool = True,
    ) -> "Generation":
        """Generates tokens from a decoder whose KV cache is explicit inputs and outputs (past_*
        in, present_* out), as ``placer generate`` does: the prompt, then one token a step, each
        step's present_* fed to the next step's past_*, every step on this plan (the model is not
        read again).

        prompt: token ids (a list or an integer array, read in order).
        temperature: 0 is greedy; above it, sampling with top_k, top_p and seed.
        stop: stop after any of these tokens. max_length: the most tokens the cache may hold.
        ids_input, logits, bind: the names of the ids' input, the logits' output and the
            cache's pairs {present: past}, where the model's are not found by name.
        on_token: called as on_token(token, index) as each token is made; False stops.
        check: check the one program that runs every step against the plan instantiated at the
            prompt's sizes, on the prompt (False: the prompt costs one run, not two).
        adapt: re-place the work when a device's measured speed drifts from the plan's for a
            few steps (auto mode, pins holding); failover: a device that fails in a step is left
            out and the step runs again (False: the failure raises). ``generation.events`` lists
            each change and why.
        """
        if mapping is None:
            mapping = self._mapping
        ids = [int(t) for t in np.asarray(prompt).reshape(-1)]
        handle = _session(self._workspace).generate(
            self._handle, ids, int(max_new_tokens), int(max_length), float(temperature),
            int(top_k), float(top_p), int(seed), [int(t) for t in stop], str(ids_input),
            str(logits), list((bind or {}).items()), _maps(mapping), bool(optimize), bool(check),
            on_token, bool(adapt), bool(failover))
        return Generation(handle.report(), handle, self, self._workspace)

    def stream(self, prompt: Any, **options: Any) -> Iterable[int]:
        """Yields the tokens of :meth:`generate` as they are made (a thread generates; the
        tokens come through a queue)."""
        import queue
        import threading

        made: "queue.Queue[Any]" = queue.Queue()
        stop = threading.Event()
        finished = object()

        def on_token(token: int, index: int) -> bool:
            made.put(token)
            return not stop.is_set()

        def work() -> None:
            try:
                self.generate(prompt, on_token=on_token, **options)
            except BaseException as error:  # handed to the consumer
                made.put(error)
            made.put(finished)

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        try:
            while True:
                item = made.get()
                if item is finished:
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()
            thread.join()


class Generation:
    """A finished generation: the new tokens, why it stopped, and its figures (time to first
    token, decode tokens/s, per-token latency, each device's busy time per token)."""

    def __init__(self, report: dict, handle: Any = None, plan: Optional["Plan"] = None,
                 workspace: Optional[PathLike] = None):
        self.report = report
        self._handle = handle
        self.plan = plan
        self._workspace = workspace

    def save(self, name: Optional[str] = None, workspace: Optional[PathLike] = None) -> bool:
        """Keeps the generation in the workspace against plan ``name`` (default: the model's
        name), saving the plan first when there is none of that name, as ``placer generate
        --save-run`` does; returns whether the plan was saved. ``Workspace.show(name)`` lists
        the plan's generations."""
        if self._handle is None or self.plan is None:
            raise PlacerError("this generation was not made by Plan.generate: nothing to keep")
        if name is None:
            name = self.plan.report["graph"]
        session = _session(workspace if workspace is not None else self._workspace)
        return session.record_generation(self._handle, _text("name", name))

    @property
    def tokens(self) -> List[int]:
        return list(self.report["tokens"])

    @property
    def stop_reason(self) -> str:
        return self.report["stop_reason"]

    @property
    def events(self) -> List[dict]:
        """Devices that failed and were left out, and re-placements (adapt): each with its
        kind, step (``iteration``), device, reason, what moved and the swap's time."""
        return list(self.report.get("events", []))

    @property
    def time_to_first_token_ms(self) -> float:
        return self.report["time_to_first_token_ms"]

    @property
    def tokens_per_second(self) -> float:
        """Decode tokens per second (the steps after the prompt)."""
        return self.report["decode_tokens_per_s"]

    def latency_ms(self, percentile: float = 50) -> float:
        """A percentile of the decode steps' wall times."""
        walls = sorted(step["wall_ms"] for step in self.report["steps"][1:])
        if not walls:
            return 0.0
        return float(np.percentile(walls, percentile))

    def __repr__(self) -> str:
        return (f"Generation({len(self.tokens)} tokens, {self.tokens_per_second:.1f} tokens/s, "
                f"stopped: {self.stop_reason})")


class Run:
    """A finished run: outputs, latency, per-node and per-copy times, idle time, the reference
    check and the prediction next to what was measured."""

    def __init__(self, plan: Plan, handle: Any, workspace: Optional[PathLike]):
        self.plan = plan
        self._handle = handle
        self._workspace = workspace
        self._report_cache: Optional[dict] = None
        self._outputs: Optional[Dict[str, np.ndarray]] = None

    @property
    def _report(self) -> dict:
        # Made on first use: a call that reads only the outputs pays nothing for it.
        if self._report_cache is None:
            self._report_cache = self._handle.report()
        return self._report_cache

    @property
    def report(self) -> dict:
        """The run report, as ``placer run --json`` writes it."""
        return self._report

    @property
    def outputs(self) -> Dict[str, np.ndarray]:
        """The last iteration's outputs by name (the arrays read the run's memory)."""
        if self._outputs is None:
            outputs = {}
            for name, value in self._handle.outputs():
                if isinstance(value, bytes):
                    value = np.load(io.BytesIO(value), allow_pickle=False)
                outputs[name] = value
            self._outputs = outputs
        return self._outputs

    @property
    def latency_ms(self) -> float:
        """The median latency of the measured iterations."""
        return self._handle.latency_ms()

    @property
    def latencies_ms(self) -> List[float]:
        """Every measured iteration's latency."""
        return self._handle.latencies_ms()

    @property
    def nodes(self) -> List[dict]:
        """Every node that ran: name, op, device, median_ms and its kernel."""
        return self._report["nodes"]

    @property
    def copies(self) -> List[dict]:
        return self._report["copies"]

    @property
    def devices(self) -> List[dict]:
        """Per device: physical device, busy and idle time, memory peaks."""
        return self._report["devices"]

    @property
    def idle(self) -> List[dict]:
        """Idle stretches of the last iteration and what each device waited for."""
        return self._report["idle"]

    @property
    def reference_check(self) -> Optional[dict]:
        return self._report["reference_check"]

    @property
    def events(self) -> List[dict]:
        """What changed where the work ran during the run, in order: re-placements
        (``adapt=True``) and failed devices left out, each with its iteration, reason, what
        moved and the latency before and after."""
        return self._report["events"]

    @property
    def prediction(self) -> Optional[dict]:
        """The plan's prediction against this run's measurement."""
        return self._report.get("prediction")

    @property
    def cancelled(self) -> bool:
        return self._handle.cancelled()

    @property
    def warnings(self) -> List[str]:
        return self._handle.warnings()

    def summary(self) -> str:
        """The readable report, as ``placer run`` prints it."""
        return self._handle.summary()

    def save_trace(self, path: PathLike) -> None:
        """Writes a Chrome trace of the last iteration (Perfetto, chrome://tracing)."""
        _placer.write_text(_path(path), self._handle.trace() + "\n")

    def save_csv(self, path: PathLike) -> None:
        """Writes every node's and copy's median time as CSV."""
        _placer.write_text(_path(path), self._handle.csv())

    def to_dataframe(self) -> Any:
        """The nodes and copies as a pandas DataFrame (needs pandas)."""
        try:
            import pandas
        except ImportError as error:
            raise ImportError("Run.to_dataframe needs pandas (Debian: python3-pandas)") from error
        rows = [dict(kind="node", **n) for n in self.nodes]
        rows += [dict(kind="copy", name=c["value"], **c) for c in self.copies]
        return pandas.DataFrame(rows)

    def save(self, name: Optional[str] = None, workspace: Optional[PathLike] = None) -> bool:
        """Records the run in the workspace against plan ``name`` (default: the model's name),
        saving the plan first when there is none of that name; returns whether it was saved."""
        if name is None:
            name = self.plan.report["graph"]
        session = _session(workspace if workspace is not None else self._workspace)
        return session.record_run(self._handle, _text("name", name))

    def __repr__(self) -> str:
        check = self.reference_check
        verdict = "unchecked" if check is None else ("matches" if check["ok"] else "DIFFERS")
        return (f"<placer.Run {self.latency_ms:.4g} ms median of {self._report['iterations']}, "
                f"reference {verdict}>")


class Workspace:
    """A workspace file: saved plans with their runs, the calibration and measured node times
    (the same SQLite file as ``placer plans`` and the GUI's Plans panel)."""

    def __init__(self, path: Optional[PathLike] = None):
        self.path = os.fspath(path) if path else default_workspace()

    def __repr__(self) -> str:
        return f"<placer.Workspace {self.path!r}>"

    def plans(self) -> List[dict]:
        """Every saved plan: name, graph, devices, copies, conflicts, note, times, last run."""
        return _placer.workspace_plans(self.path)

    def save(self, plan: Plan, name: str, note: str = "") -> None:
        plan.save(name, note, self.path)

    def show(self, name: str) -> dict:
        """A saved plan: its devices, each node's device, its copies, what the planner would now
        answer differently, its last run, and its generations (the latest first)."""
        return _placer.workspace_show(self.path, _text("name", name))

    def load(self, name: str, model: Optional[PathLike] = None) -> Plan:
        """The saved plan, planned again from its stored graph, pins and options. A workspace
        keeps no weights: to run the plan, give the model file it was saved from, whose nodes
        then take the saved pins."""
        path = None if model is None else _path(model)
        handle = _placer.workspace_load(_session(self.path), self.path, _text("name", name), path)
        loaded = None if path is None else load(path, workspace=self.path)
        plan = Plan(loaded, handle, self.path)
        if path is None:
            plan._stored_without_model = name
        return plan

    def diff(self, a: str, b: str) -> dict:
        """Nodes whose device differs, copies added and removed, bytes moved, and the last runs
        of both, as ``placer plans diff`` gives them: their latencies and the ten nodes whose
        median time changed most."""
        out = _placer.workspace_diff(self.path, _text("a", a), _text("b", b))
        runs = [self.show(name)["last_run"] for name in (a, b)]
        out["latency_ms"] = [None if run is None else run["latency_ms"] for run in runs]
        out["node_time_changes"] = []
        if runs[0] is not None and runs[1] is not None:
            times = [{n["name"]: n["median_ms"] for n in run["report"]["nodes"]} for run in runs]
            common = [name for name in times[0] if name in times[1]]
            common.sort(key=lambda name: abs(times[1][name] - times[0][name]), reverse=True)
            out["node_time_changes"] = [
                {"name": name, "a_ms": times[0][name], "b_ms": times[1][name]}
                for name in common[:10]
            ]
        return out

    def delete(self, name: str) -> None:
        _placer.workspace_delete(self.path, _text("name", name))

    def rename(self, old: str, new: str) -> None:
        _placer.workspace_rename(self.path, _text("old", old), _text("new", new))

    def calibrate(self, quick: bool = False, iterations: int = 5) -> dict:
        return calibrate(quick, iterations, self.path)
