#!/usr/bin/env python3
"""For scripts/gpu-check.sh run's `table` part, on a machine with CUDA PyTorch.

  scripts/gpu_models_table.py DIR

Exports the full-size models of `export_models.py full` (random weights, TorchScript exporter,
opset 13) into DIR, unless they are there, and times each in PyTorch eager on cuda:0 (float32,
TF32 off, cuDNN benchmark on, the input's copy from the host included, as bench_cuda times both);
writes DIR/torch_ms.txt, "NAME MILLISECONDS" a line, which gpu-check.sh reads.
"""
import importlib.util, os, sys, time, torch, torchvision
folder = sys.argv[1]
spec = importlib.util.spec_from_file_location(
    "export_models", os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_models.py"))
em = importlib.util.module_from_spec(spec)
spec.loader.exec_module(em)
_export = torch.onnx.export
def export(*a, **k):
    k.setdefault("dynamo", False)
    return _export(*a, **k)
torch.onnx.export = export
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.benchmark = True

def timed(model, x, iterations=30):
    m = model.eval().cuda()
    with torch.no_grad():
        for _ in range(5):
            m(x.cuda())
        torch.cuda.synchronize()
        ts = []
        for _ in range(iterations):
            t = time.perf_counter()
            m(x.cuda())
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2] * 1000

torch.manual_seed(0)
models = []
for name in ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "googlenet", "vgg11",
             "densenet121", "efficientnet_b0", "inception_v3", "mnasnet1_0", "regnet_y_400mf"]:
    extra = {"aux_logits": False, "init_weights": False} if name in ("googlenet", "inception_v3") else {}
    size = 299 if name == "inception_v3" else 224
    models.append((name, getattr(torchvision.models, name)(weights=None, **extra),
                   torch.randn(1, 3, size, size), ("input",)))
models.append(("resnet50_batch32", torchvision.models.resnet50(weights=None),
               torch.randn(32, 3, 224, 224), ("input",)))
models.append(("bert_base_encoder", em.Encoder(30522, 768, 12, 3072, 12, 128),
               torch.randint(0, 30522, (1, 128)), ("ids",)))
with open(os.path.join(folder, "torch_ms.txt"), "w") as out:
    for name, model, x, names in models:
        t = time.time()
        path = os.path.join(folder, name + ".onnx")
        if not os.path.exists(path):
            em.export(model, x, path, names)
        ms = timed(model, x)
        print(name, f"{ms:.3f}", file=out, flush=True)
        print(name, f"exported and timed in {time.time() - t:.1f} s: PyTorch {ms:.3f} ms", flush=True)
