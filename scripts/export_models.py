#!/usr/bin/python3
"""Exports ONNX models with random weights for tests, examples and benchmarks.

Uses Debian's python3-torch and python3-torchvision (nothing is downloaded: weights are random).

  scripts/export_models.py small DIR   small variants of each family (tens of KiB each); these
                                       are committed under resources/models/
                                       with, for each, an input and PyTorch's output as .npy
                                       (NAME.input.npy, NAME.expected.npy) to check the runtime
  scripts/export_models.py full DIR    full-size torchvision classifiers, a BERT-base-sized
                                       encoder, and the models tst_runtime checks against PyTorch
                                       when $PLACER_ONNX_MODELS names DIR (transformers, Swin-T,
                                       ShuffleNetV2, ConvNeXt-Tiny, FCN-ResNet50, an LSTM,
                                       ResNet-50 at batch 8), each with NAME.input.npy and
                                       NAME.expected.npy (tens to hundreds of MiB); generated on
                                       demand, never committed
  scripts/export_models.py checked DIR only the models tst_runtime checks
  scripts/export_models.py detectors DIR [NAME...]
                                       torchvision's detectors with random weights and score
                                       thresholds at 0 (so that they return detections):
                                       ssdlite (SSDlite320-MobileNetV3, 320x320), fasterrcnn
                                       (Faster R-CNN MobileNetV3-Large-320-FPN, 320x320),
                                       retinanet (RetinaNet-ResNet50-FPN, 400x400) and maskrcnn
                                       (Mask R-CNN-ResNet50-FPN, 400x400), at opset 13, each with
                                       NAME.input.npy and PyTorch's outputs NAME.OUTPUT.npy; the
                                       models bench_vs_ort compares with ONNX Runtime when
                                       $PLACER_ONNX_MODELS names DIR (tens to 170 MiB each);
                                       named, also fcos, keypointrcnn and ssd300
  scripts/export_models.py tiny-detector DIR
                                       a Faster R-CNN with a two-layer backbone on 64x64 images
                                       (114 KiB: its RPN's NMS in an If, TopK on data, RoiAlign
                                       over the regions kept), committed as
                                       tests/models/tiny_detector.onnx with its input and
                                       PyTorch's outputs (tiny_detector.{images,boxes,labels,
                                       scores}.npy)
  scripts/export_models.py families DIR [NAME...]
                                       one model of each family of torchvision's classifiers
                                       and all three of its segmentation families, exported with a
                                       symbolic batch (as users export them), each with
                                       NAME.input.npy and NAME.expected.npy; those named only;
                                       scripts/check_families.sh runs them and compares
  scripts/export_models.py large DIR [GB]
                                       a transformer encoder (nn.TransformerEncoderLayer repeated,
                                       width 1024, or 2048 from 3 GB) with about GB gigabytes of
                                       float32 weights (default 1.2: 24 layers of width 1024) as
                                       ONNX external data: encoder_NGB.onnx holds the graph and
                                       encoder_NGB.onnx.data the weights, with an input
                                       (1 x 128 tokens) beside them; written in the memory of one
                                       layer, for checking by hand how planning and running scale
                                       with model size
"""
import os
import sys

import numpy as np
import torch
from torch import nn
import torchvision
from torchvision.models.mobilenetv2 import InvertedResidual
from torchvision.models.resnet import BasicBlock, Bottleneck

OPSET = 13


class TinyResNet(nn.Module):
    """A ResNet stem, two residual stages and a classifier, 8 to 16 channels wide."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        down = nn.Sequential(nn.Conv2d(8, 16, 1, 2, bias=False), nn.BatchNorm2d(16))
        self.layer1 = BasicBlock(8, 8)
        self.layer2 = BasicBlock(8, 16, stride=2, downsample=down)
        self.layer3 = Bottleneck(16, 4, downsample=nn.Sequential(nn.Conv2d(16, 16, 1, bias=False),
                                                                 nn.BatchNorm2d(16)))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.layer3(self.layer2(self.layer1(self.stem(x))))
        return self.fc(torch.flatten(self.pool(x), 1))


class TinyMobileNet(nn.Module):
    """MobileNetV2's inverted residuals (depthwise convolutions, ReLU6 as Clip)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU6())
        self.blocks = nn.Sequential(InvertedResidual(8, 8, 1, 2), InvertedResidual(8, 12, 2, 4),
                                    InvertedResidual(12, 12, 1, 4))
        self.head = nn.Sequential(nn.Conv2d(12, 32, 1, bias=False), nn.BatchNorm2d(32), nn.Hardswish())
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(32, 10))

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.classifier(x.mean([2, 3]))


class Fire(nn.Module):
    def __init__(self, inplanes, squeeze, expand):
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(inplanes, squeeze, 1), nn.ReLU(inplace=True))
        self.expand1 = nn.Sequential(nn.Conv2d(squeeze, expand, 1), nn.ReLU(inplace=True))
        self.expand3 = nn.Sequential(nn.Conv2d(squeeze, expand, 3, padding=1), nn.ReLU(inplace=True))

    def forward(self, x):
        x = self.squeeze(x)
        return torch.cat([self.expand1(x), self.expand3(x)], 1)


class TinyInception(nn.Module):
    """SqueezeNet Fire modules and an Inception-style block of four concatenated branches."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, 2, ceil_mode=True))
        self.fire = Fire(16, 4, 8)
        self.b1 = nn.Conv2d(16, 4, 1)
        self.b3 = nn.Sequential(nn.Conv2d(16, 4, 1), nn.Conv2d(4, 8, 3, padding=1))
        self.b5 = nn.Sequential(nn.Conv2d(16, 2, 1), nn.Conv2d(2, 4, 5, padding=2))
        self.bp = nn.Sequential(nn.MaxPool2d(3, 1, 1), nn.Conv2d(16, 4, 1))
        self.classifier = nn.Sequential(nn.Conv2d(20, 10, 1), nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d(1))

    def forward(self, x):
        x = self.fire(self.stem(x))
        x = torch.cat([self.b1(x), self.b3(x), self.b5(x), self.bp(x)], 1)
        return torch.flatten(self.classifier(x), 1)


class EncoderLayer(nn.Module):
    """A transformer encoder layer written out (attention, GELU feed-forward, LayerNorm)."""

    def __init__(self, width, heads, hidden):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.norm1 = nn.LayerNorm(width)
        self.ff = nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, width))
        self.norm2 = nn.LayerNorm(width)

    def forward(self, x):
        batch, tokens, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        shape = (batch, tokens, self.heads, width // self.heads)
        q, k, v = (t.reshape(shape).transpose(1, 2) for t in (q, k, v))
        scores = torch.softmax(q @ k.transpose(2, 3) / (width // self.heads) ** 0.5, dim=-1)
        attended = (scores @ v).transpose(1, 2).reshape(batch, tokens, width)
        x = self.norm1(x + self.out(attended))
        return self.norm2(x + self.ff(x))


class Encoder(nn.Module):
    def __init__(self, vocab, width, heads, hidden, layers, tokens):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.randn(1, tokens, width) * 0.02)
        self.layers = nn.Sequential(*[EncoderLayer(width, heads, hidden) for _ in range(layers)])

    def forward(self, ids):
        return self.layers(self.embed(ids) + self.position)


class CausalDecoder(nn.Module):
    """A GPT-style decoder: pre-norm blocks, GELU, and a causal mask built from the input's
    length (a Shape -> Trilu/Where subgraph in the export)."""

    def __init__(self, vocab, width, heads, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Embedding(512, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, ids):
        tokens = ids.shape[1]
        positions = torch.arange(tokens, device=ids.device).unsqueeze(0)
        mask = torch.triu(torch.full((tokens, tokens), float("-inf")), diagonal=1)
        x = self.blocks(self.embed(ids) + self.position(positions), mask=mask)
        return self.head(self.norm(x))


class LstmTagger(nn.Module):
    """A two-layer LSTM over a sequence of feature vectors, and a linear head per step."""

    def __init__(self, features, hidden, classes):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.lstm(x)[0])


class OutOnly(nn.Module):
    """A segmentation model's "out" entry alone (torchvision returns a dict)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def export(model, example, path, names=("input",), reference=False, dynamic=None, opset=OPSET):
    model.eval()
    # Traced with gradients on: PyTorch's fused attention fast path (taken without them) has no
    # ONNX export.
    with torch.enable_grad():
        torch.onnx.export(model, example, path, opset_version=opset, input_names=list(names),
                          output_names=["output"], do_constant_folding=True,
                          dynamic_axes=dynamic)
    with torch.enable_grad():  # the reference takes the path the export traced
        if reference:
            # A fresh input and PyTorch's output for it, to check the runtime against.
            generator = torch.Generator().manual_seed(1)
            if example.dtype == torch.int64:
                data = torch.randint(0, 100, example.shape, generator=generator)
            else:
                data = torch.rand(example.shape, generator=generator) * 2 - 1
            base = os.path.splitext(path)[0]
            np.save(base + ".input.npy", data.numpy())
            np.save(base + ".expected.npy", model(data).detach().numpy())
    print(f"{path}: {os.path.getsize(path) / 1024:.1f} KiB")


def small(folder):
    torch.manual_seed(0)
    image = torch.randn(1, 3, 32, 32)
    export(TinyResNet(), image, os.path.join(folder, "tiny_resnet.onnx"), reference=True)
    export(TinyMobileNet(), image, os.path.join(folder, "tiny_mobilenet.onnx"), reference=True)
    export(TinyInception(), image, os.path.join(folder, "tiny_inception.onnx"), reference=True)
    ids = torch.randint(0, 100, (1, 16))
    export(Encoder(100, 32, 4, 64, 2, 16), ids, os.path.join(folder, "tiny_encoder.onnx"), ["ids"],
           reference=True)
    # The same at batch 4, for splitting a batch across devices (tests/core/plan/tst_split.cpp).
    export(Encoder(100, 32, 4, 64, 2, 16), torch.randint(0, 100, (4, 16)),
           os.path.join(folder, "tiny_encoder_batch4.onnx"), ["ids"], reference=True)


def full(folder):
    torch.manual_seed(0)
    image = torch.randn(1, 3, 224, 224)
    classifiers = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "googlenet", "vgg11",
                   "densenet121", "efficientnet_b0", "inception_v3", "mnasnet1_0",
                   "regnet_y_400mf"]
    for name in classifiers:
        extra = {"aux_logits": False, "init_weights": False} if name in ("googlenet", "inception_v3") else {}
        model = getattr(torchvision.models, name)(weights=None, **extra)
        example = torch.randn(1, 3, 299, 299) if name == "inception_v3" else image
        export(model, example, os.path.join(folder, name + ".onnx"))
    # ResNet-50 at batch 32 too, for the CUDA benchmark (tests/benchmarks/bench_cuda.cpp).
    export(torchvision.models.resnet50(weights=None), torch.randn(32, 3, 224, 224),
           os.path.join(folder, "resnet50_batch32.onnx"))
    ids = torch.randint(0, 30522, (1, 128))
    export(Encoder(30522, 768, 12, 3072, 12, 128), ids, os.path.join(folder, "bert_base_encoder.onnx"),
           ["ids"])
    checked(folder)


def checked(folder):
    """The models tst_runtime runs against PyTorch's outputs (PLACER_ONNX_MODELS=folder). The
    transformers are exported with symbolic batch and sequence dimensions, as users export them,
    so their Reshape and Slice bounds come from Shape subgraphs."""
    torch.manual_seed(0)
    image = torch.randn(1, 3, 224, 224)
    path = lambda name: os.path.join(folder, name + ".onnx")
    skip = set(sys.argv[3:])  # names already written
    if "vit_b_16" not in skip:
        vit = torchvision.models.vit_b_16(weights=None)
        nn.init.normal_(vit.heads.head.weight, std=0.02)  # zero-initialised: outputs all 0
        export(vit, image, path("vit_b_16"), reference=True, dynamic={"input": {0: "batch"}})
    encoder = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.0, batch_first=True), 4)
    export(encoder, torch.randn(1, 64, 256), path("transformer_encoder"), reference=True,
           dynamic={"input": {0: "batch", 1: "tokens"}})
    export(CausalDecoder(1000, 256, 8, 4), torch.randint(0, 1000, (1, 64)), path("causal_decoder"),
           ["input"], reference=True, dynamic={"input": {0: "batch", 1: "tokens"}},
           opset=14)  # torch.triu exports as Trilu from opset 14
    export(torchvision.models.swin_t(weights=None), image, path("swin_t"), reference=True)
    export(torchvision.models.shufflenet_v2_x1_0(weights=None), image, path("shufflenet_v2"),
           reference=True, dynamic={"input": {0: "batch"}})
    export(torchvision.models.convnext_tiny(weights=None), image, path("convnext_tiny"),
           reference=True)
    fcn = torchvision.models.segmentation.fcn_resnet50(weights=None, weights_backbone=None,
                                                       aux_loss=False)
    export(OutOnly(fcn), image, path("fcn_resnet50"), reference=True)
    export(LstmTagger(64, 128, 10), torch.randn(1, 50, 64), path("lstm_tagger"), reference=True)
    export(torchvision.models.resnet50(weights=None), torch.randn(8, 3, 224, 224),
           path("resnet50_batch8"), reference=True)


# The smallest model of each family torchvision's classifiers and segmenters come in (Swin V2
# is not among them: PyTorch 1.13 cannot export its aten::zero at opset 13).
FAMILIES = ["alexnet", "convnext_tiny", "densenet121", "efficientnet_b0", "efficientnet_v2_s",
            "googlenet", "inception_v3", "maxvit_t", "mnasnet0_5", "mobilenet_v2",
            "mobilenet_v3_small", "regnet_x_400mf", "regnet_y_400mf", "resnet18",
            "resnext50_32x4d", "shufflenet_v2_x0_5", "squeezenet1_1", "swin_t", "vgg11_bn", "vit_b_16", "wide_resnet50_2", "fcn_resnet50",
            "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]


def families(folder):
    wanted = sys.argv[3:] or FAMILIES
    for name in wanted:
        torch.manual_seed(0)
        if hasattr(torchvision.models.segmentation, name):
            model = OutOnly(getattr(torchvision.models.segmentation, name)(
                weights=None, weights_backbone=None))
        else:
            extra = {"aux_logits": False, "init_weights": False} \
                if name in ("googlenet", "inception_v3") else {}
            model = getattr(torchvision.models, name)(weights=None, **extra)
        if name.startswith("vit_"):
            nn.init.normal_(model.heads.head.weight, std=0.02)  # zero-initialised: outputs all 0
        side = 299 if name == "inception_v3" else 224
        export(model, torch.randn(1, 3, side, side), os.path.join(folder, name + ".onnx"),
               reference=True, dynamic={"input": {0: "batch"}})


def large(folder):
    """One encoder layer is exported with PyTorch and repeated in the ONNX graph, each copy with
    weights of its own streamed into the data file (64-byte aligned), so that a model of any size
    is written in the memory of one layer."""
    import tempfile

    import onnx
    from onnx import helper, numpy_helper

    gigabytes = float(sys.argv[3]) if len(sys.argv) > 3 else 1.2
    width = 1024 if gigabytes < 3 else 2048
    layer_bytes = 4 * 12 * width * width  # attention 4 d^2, feed-forward 8 d^2
    layers = max(1, round(gigabytes * 1e9 / layer_bytes))
    name = f"encoder_{gigabytes:g}GB"
    path = os.path.join(folder, name + ".onnx")
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(width, width // 64, 4 * width, dropout=0.0,
                                       batch_first=True)
    example = torch.randn(1, 128, width)
    np.save(os.path.join(folder, name + ".input.npy"), example.numpy())
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        raw = os.path.join(scratch, "layer.onnx")
        export(layer, example, raw, dynamic={"input": {0: "batch", 1: "tokens"}})
        one = onnx.load(raw)
    del layer
    g = one.graph
    first, last = g.input[0].name, g.output[0].name
    generator = np.random.default_rng(0)
    nodes, initializers = [], []
    offset = 0
    previous = first
    with open(path + ".data", "wb") as data:
        for i in range(layers):
            def rename(value, i=i, previous=previous):
                if value == "":
                    return value
                return previous if value == first else f"layer{i}/{value}"

            for tensor in g.initializer:
                array = numpy_helper.to_array(tensor)
                copy = onnx.TensorProto()
                if array.size >= 1024 and array.dtype == np.float32:
                    values = generator.standard_normal(array.shape, dtype=np.float32) * 0.02
                    copy.name = rename(tensor.name)
                    copy.data_type = tensor.data_type
                    copy.dims.extend(tensor.dims)
                    copy.data_location = onnx.TensorProto.EXTERNAL
                    for key, value in (("location", name + ".onnx.data"), ("offset", str(offset)),
                                       ("length", str(values.nbytes))):
                        entry = copy.external_data.add()
                        entry.key, entry.value = key, value
                    data.write(values.tobytes())
                    padding = -values.nbytes % 64
                    data.write(b"\0" * padding)
                    offset += values.nbytes + padding
                else:
                    copy.CopyFrom(tensor)
                    copy.name = rename(tensor.name)
                initializers.append(copy)
            for node in g.node:
                copy = onnx.NodeProto()
                copy.CopyFrom(node)
                copy.name = f"layer{i}/{node.name}"
                copy.input[:] = [rename(v) for v in node.input]
                copy.output[:] = [rename(v) for v in node.output]
                nodes.append(copy)
            previous = rename(last)
    output = onnx.ValueInfoProto()
    output.CopyFrom(g.output[0])
    output.name = previous
    graph = helper.make_graph(nodes, name, [g.input[0]], [output], initializers)
    model = helper.make_model(graph, opset_imports=one.opset_import)
    model.ir_version = one.ir_version
    onnx.save(model, path)
    print(f"{path}: {layers} layers of width {width}, "
          f"{os.path.getsize(path + '.data') / 1e9:.2f} GB of weights in {name}.onnx.data")


def detectors(folder):
    """Detection models whose shapes are found at run time: NonMaxSuppression, TopK on data,
    If and Loop over detections, RoiAlign over the regions kept."""
    det = torchvision.models.detection
    models = {
        "ssdlite": (lambda: det.ssdlite320_mobilenet_v3_large(
            weights=None, weights_backbone=None, score_thresh=0.0), 320),
        "fasterrcnn": (lambda: det.fasterrcnn_mobilenet_v3_large_320_fpn(
            weights=None, weights_backbone=None, box_score_thresh=0.0), 320),
        "retinanet": (lambda: det.retinanet_resnet50_fpn(
            weights=None, weights_backbone=None, score_thresh=0.0), 400),
        "maskrcnn": (lambda: det.maskrcnn_resnet50_fpn(
            weights=None, weights_backbone=None, box_score_thresh=0.0), 400),
        # Named only (not among bench_vs_ort's four): the rest of the detection family.
        "fcos": (lambda: det.fcos_resnet50_fpn(
            weights=None, weights_backbone=None, score_thresh=0.0), 400),
        "keypointrcnn": (lambda: det.keypointrcnn_resnet50_fpn(
            weights=None, weights_backbone=None, box_score_thresh=0.0), 400),
        "ssd300": (lambda: det.ssd300_vgg16(
            weights=None, weights_backbone=None, score_thresh=0.0), 300),
    }
    wanted = sys.argv[3:] or ["ssdlite", "fasterrcnn", "retinanet", "maskrcnn"]
    for name, (make, size) in models.items():
        if name not in wanted:
            continue
        torch.manual_seed(0)
        model = make().eval()
        x = torch.rand(1, 3, size, size)
        path = os.path.join(folder, name + ".onnx")
        torch.onnx.export(model, (x,), path, opset_version=OPSET, input_names=["images"])
        np.save(os.path.join(folder, name + ".input.npy"), x.numpy())
        with torch.no_grad():
            outputs = model(x)[0]
        for key, value in outputs.items():
            np.save(os.path.join(folder, "%s.%s.npy" % (name, key)), value.numpy())
        print(path, {key: tuple(value.shape) for key, value in outputs.items()})


def tiny_detector(folder):
    """A detector small enough to commit, with every dynamic part of the real ones."""
    from torchvision.models.detection import FasterRCNN
    from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
    from torchvision.models.detection.rpn import AnchorGenerator
    from torchvision.ops import MultiScaleRoIAlign
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 8, 3, 2, 1),
                             nn.ReLU())
    backbone.out_channels = 8
    anchors = AnchorGenerator(sizes=((8, 16, 32),), aspect_ratios=((0.5, 1.0, 2.0),))
    pool = MultiScaleRoIAlign(featmap_names=["0"], output_size=4, sampling_ratio=2)
    model = FasterRCNN(backbone, num_classes=3, rpn_anchor_generator=anchors, box_roi_pool=pool,
                       min_size=64, max_size=64, box_score_thresh=0.0, representation_size=16,
                       rpn_pre_nms_top_n_test=200, rpn_post_nms_top_n_test=50,
                       box_detections_per_img=20)
    model.roi_heads.box_head = TwoMLPHead(8 * 4 * 4, 16)
    model.roi_heads.box_predictor = FastRCNNPredictor(16, 3)
    model.eval()
    x = torch.rand(1, 3, 64, 64)
    torch.onnx.export(model, (x,), os.path.join(folder, "tiny_detector.onnx"),
                      opset_version=OPSET, input_names=["images"])
    with torch.no_grad():
        outputs = model(x)[0]
    np.save(os.path.join(folder, "tiny_detector.images.npy"), x.numpy())
    for key, value in outputs.items():
        np.save(os.path.join(folder, "tiny_detector.%s.npy" % key), value.numpy())


if __name__ == "__main__":
    modes = {"small": small, "full": full, "checked": checked, "large": large,
             "detectors": detectors, "tiny-detector": tiny_detector, "families": families}
    if len(sys.argv) < 3 or sys.argv[1] not in modes:
        sys.exit(__doc__)
    os.makedirs(sys.argv[2], exist_ok=True)
    modes[sys.argv[1]](sys.argv[2])
