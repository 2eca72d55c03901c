// ONNX import: the committed models of each family, agreement with python3-onnx, the round trip
// through --emit onnx, unknown operators, and every kind of bad input the issue lists.
#include "PlanTestUtil.h"

#include "backends/cpu/ConstantEvaluation.h"
#include "device/DeviceMapping.h"
#include "device/DeviceRegistry.h"
#include "io/JsonGraph.h"
#include "io/ModelLoader.h"
#include "io/OnnxReader.h"
#include "io/OnnxWriter.h"
#include "ir/StringPool.h"
#include "plan/PlannedGraph.h"
#include "plan/Planner.h"
#include "vm/Bytecode.h"
#include "vm/Executor.h"
#include "vm/ReferenceRun.h"

#include "OnnxModels.h"
#include "kernels/RandomTensor.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <variant>

using namespace placer;
using namespace placer::test;

namespace {

const QString kModels = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/");

Result<LoadedModel> load(const QString& path) {
    return loadModelFile(path.toStdString(), GraphFormat::Auto, std::nullopt);
}

std::map<std::string, int> opCounts(const Graph& graph) {
    std::map<std::string, int> counts;
    for (const Node& node : graph.nodes())
        ++counts[node.op->name];
    return counts;
}

/// A minimal valid model: x -> Relu -> y, 2x3 float32, opset 13.
onnx::ModelProto reluModel() {
    onnx::ModelProto model = emptyModel("relu");
    onnx::GraphProto* g = model.mutable_graph();
    addValue(g->mutable_input(), "x", {2, 3});
    addValue(g->mutable_output(), "y", {2, 3});
    addNode(g, "Relu", {"x"}, {"y"})->set_name("relu");
    return model;
}

} // namespace

class TestOnnxReader : public QObject {
    Q_OBJECT

private slots:
    void foldingStartsNoThreads(); // first: before any other test folds on this thread
    void committedModels_data();
    void committedModels();
    void agreesWithPythonOnnx_data();
    void agreesWithPythonOnnx();
    void roundTripThroughEmitOnnx_data();
    void roundTripThroughEmitOnnx();
    void unknownOperatorStillLoads();
    void externalDataBesideTheModel();
    void weightsStayInTheFile();
    void theHostReadsConstantsWhereTheyLie();
    void aWeightsFileCutShortUnderARunFailsIt();
    void oldOpsetModelsWithUndefinedNamesAreRefused();
    void externalDataBeyondTwoGigabytes();
    void badInput_data();
    void badInput();
    void oldOpsetIsConverted();
    void shapeSubgraphsFoldAtLoad();
    void foldingIsBounded();
    void inputShapesFixSymbolicDimensions();
    void functionsWithoutKernelsAreExpanded();
    void dataDependentOutputsAreBoundedAndFilledAtRun();
    void controlFlowRunsItsBodiesOnItsDevice();
    void controlFlowBodiesMustKeepTheirShapes();
    void nestedBodiesReadTheOutermostGraph();
    void aDeviceRunsControlFlowOnlyWithKernelsForItsBody();
    void sequencesBecomeTheTensorsTheyHold();
    void sequenceInputsAreGivenByTheirElements();
    void sequencesTheLoadCannotFixAreRefused();
    void loopsWhoseShapesFollowTheIterationAreUnrolled();
    void stringTensorsRunOnTheCpu();
    void anOutputShapeThatDoesNotBroadcastIsRefused();
    void anEmptyShapePrefixStillInfers();
};

void TestOnnxReader::committedModels_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("inputShape");
    QTest::addColumn<QString>("outputShape");
    QTest::addColumn<QString>("ops"); // op:count that must match
    QTest::newRow("resnet") << "tiny_resnet.onnx"
                            << "input"
                            << "1x3x32x32 float32"
                            << "1x10 float32"
                            << "Conv:10 Relu:8 Add:3 Gemm:1 MaxPool:1";
    QTest::newRow("mobilenet") << "tiny_mobilenet.onnx"
                               << "input"
                               << "1x3x32x32 float32"
                               << "1x10 float32"
                               << "Conv:11 Clip:7 HardSigmoid:1 ReduceMean:1";
    QTest::newRow("inception-squeezenet") << "tiny_inception.onnx"
                                          << "input"
                                          << "1x3x32x32 float32"
                                          << "1x10 float32"
                                          << "Conv:11 Concat:2 MaxPool:2";
    QTest::newRow("transformer-encoder") << "tiny_encoder.onnx"
                                         << "ids"
                                         << "1x16 int64"
                                         << "1x16x32 float32"
                                         << "MatMul:12 Softmax:2 Erf:2 Gather:1 Reshape:8";
    QTest::newRow("control-flow") << "tiny_recurrent.onnx"
                                  << "input"
                                  << "2x16 float32"
                                  << "2x4 float32"
                                  << "Loop:1 If:1 MatMul:1 Softmax:1";
}

void TestOnnxReader::committedModels() {
    QFETCH(QString, file);
    QFETCH(QString, input);
    QFETCH(QString, inputShape);
    QFETCH(QString, outputShape);
    QFETCH(QString, ops);
    auto model = load(kModels + file);
    QVERIFY2(model, model ? "" : model.error().toString().c_str());
    const Graph& g = model.value().graph;
    QCOMPARE(g.sourceFormat, std::string("onnx"));
    QCOMPARE(g.name, QFileInfo(file).completeBaseName().toStdString());
    QCOMPARE(model.value().warnings, std::vector<std::string>{});
    const Node& parameter = g.node(*g.find(input.toStdString()));
    QVERIFY(parameter.isParameter());
    QCOMPARE(QString::fromStdString(parameter.outputs[0].toShortString()), inputShape);
    QCOMPARE(g.outputs().size(), std::size_t(1));
    QCOMPARE(g.outputs()[0].name, std::string("output"));
    QCOMPARE(QString::fromStdString(g.type(g.outputs()[0].value).toShortString()), outputShape);
    const auto counts = opCounts(g);
    for (const QString& pair : ops.split(' ')) {
        const QString op = pair.section(':', 0, 0);
        QCOMPARE(counts.count(op.toStdString()) ? counts.at(op.toStdString()) : 0,
                 pair.section(':', 1).toInt());
    }
    // Weights carry their data and sizes; every op has a kernel somewhere.
    for (const Node& node : g.nodes()) {
        if (node.isConstant())
            QCOMPARE(static_cast<std::int64_t>(node.data->size()), node.outputs[0].bytes());
        if (node.role() == OpRole::Compute)
            QVERIFY2(node.op->hasAnyKernel(), node.op->name.c_str());
    }
    const Plan plan = planDevices(g, model.value().devices, PlanOptions{});
    QVERIFY(plan.conflicts.empty());
}

void TestOnnxReader::agreesWithPythonOnnx_data() {
    QTest::addColumn<QString>("path");
    for (const char* file :
         {"tiny_resnet.onnx", "tiny_mobilenet.onnx", "tiny_inception.onnx", "tiny_encoder.onnx"})
        QTest::newRow(file) << kModels + file;
    // Full-size models from `scripts/export_models.py full DIR`, when PLACER_ONNX_MODELS names DIR.
    const QString extra = qEnvironmentVariable("PLACER_ONNX_MODELS");
    if (!extra.isEmpty()) {
        for (const QString& file : QDir(extra).entryList({"*.onnx"}, QDir::Files))
            QTest::newRow(file.toUtf8().constData()) << QDir(extra).filePath(file);
    }
}

void TestOnnxReader::agreesWithPythonOnnx() {
    QFETCH(QString, path);
    const QString python = "/usr/bin/python3";
    QProcess probe;
    probe.start(python, {"-c", "import onnx"});
    if (!probe.waitForFinished(60000) || probe.exitCode() != 0)
        QSKIP("Debian's python3-onnx is not installed (apt-get install python3-onnx)");
    // What ONNX's own Python package reports: per node, its outputs' shapes after inference.
    const char* script = R"PY(
import json, sys, onnx
from onnx import shape_inference
m = shape_inference.infer_shapes(onnx.load(sys.argv[1]), data_prop=True)
g = m.graph
types = {v.name: v.type.tensor_type for v in list(g.value_info) + list(g.output) + list(g.input)}
def shape(name):
    t = types.get(name)
    return [d.dim_value if d.HasField("dim_value") else 1 for d in t.shape.dim] if t else None
nodes = {}
for n in g.node:
    if n.op_type == "Constant":
        continue
    nodes[n.name or n.output[0]] = {"op": n.op_type, "outputs": [shape(o) for o in n.output if o]}
inits = {i.name for i in g.initializer}
edges = sum(len([i for i in n.input if i]) for n in g.node if n.op_type != "Constant")
print(json.dumps({"nodes": nodes, "edges": edges,
                  "constants": len(g.initializer) + sum(n.op_type == "Constant" for n in g.node),
                  "parameters": len([i for i in g.input if i.name not in inits])}))
)PY";
    QProcess process;
    process.start(python, {"-c", script, path});
    QVERIFY(process.waitForFinished(300000));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
    const QJsonObject expected = QJsonDocument::fromJson(process.readAllStandardOutput()).object();

    auto model = load(path);
    QVERIFY2(model, model ? "" : model.error().toString().c_str());
    const Graph& g = model.value().graph;
    int constants = 0, parameters = 0, ops = 0, edges = 0;
    for (const Node& node : g.nodes()) {
        constants += node.isConstant() ? 1 : 0;
        parameters += node.isParameter() ? 1 : 0;
        if (node.role() != OpRole::Compute)
            continue;
        ++ops;
        edges += static_cast<int>(node.inputs.size());
        const QJsonObject theirs =
            expected["nodes"].toObject()[QString::fromStdString(node.name)].toObject();
        QVERIFY2(!theirs.isEmpty(), node.name.c_str());
        QCOMPARE(theirs["op"].toString().toStdString(), node.op->name);
        const QJsonArray outputs = theirs["outputs"].toArray();
        QCOMPARE(static_cast<std::size_t>(outputs.size()), node.outputs.size());
        for (int k = 0; k < outputs.size(); ++k) {
            std::vector<std::int64_t> shape;
            for (const QJsonValue d : outputs[k].toArray())
                shape.push_back(d.toInteger());
            QCOMPARE(node.outputs[k].shape, shape);
        }
    }
    QCOMPARE(ops, expected["nodes"].toObject().size());
    QCOMPARE(edges, expected["edges"].toInt());
    QCOMPARE(constants, expected["constants"].toInt());
    QCOMPARE(parameters, expected["parameters"].toInt());
}

void TestOnnxReader::roundTripThroughEmitOnnx_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("resnet") << "tiny_resnet.onnx";
    QTest::newRow("encoder") << "tiny_encoder.onnx";
    QTest::newRow("control-flow") << "tiny_recurrent.onnx";
}

void TestOnnxReader::roundTripThroughEmitOnnx() {
    QFETCH(QString, file);
    // Read against a three-device set, then plan with rules and a fixed pin.
    const DeviceSet set = test::devices("cpu:cpu,gpu:cuda:mem=1GiB,v:vcpu");
    auto model = loadModelFile((kModels + file).toStdString(), GraphFormat::Onnx, set);
    QVERIFY(model);
    Graph& graph = model.value().graph;
    graph.node(NodeId(static_cast<std::uint32_t>(graph.size() - 1))).pin =
        Pin{PinKind::Fixed, DeviceId(2), "test"};
    PlanOptions options;
    options.rules = {{"MatMul", "gpu"}, {"Conv", "gpu"}};
    options.fallbackDevice = "cpu";
    const Plan plan = planDevices(graph, set, options);
    const Graph planned = applyPlan(graph, set, plan);
    auto bytes = writeOnnx(planned, set);
    QVERIFY2(bytes, bytes ? "" : bytes.error().message.c_str());

    // Read back with no devices given: the model's own device set, pins and copies.
    auto reread = loadModelText(bytes.value(), "planned.onnx", GraphFormat::Auto, std::nullopt);
    QVERIFY2(reread, reread ? "" : reread.error().toString().c_str());
    QCOMPARE(reread.value().devices, set);
    const Graph& back = reread.value().graph;
    QCOMPARE(back.size(), planned.size());
    const Plan replan = planDevices(back, set, PlanOptions{});
    QVERIFY(replan.conflicts.empty());
    for (const Node& node : planned.nodes()) {
        const auto id = back.find(node.name);
        QVERIFY2(id, node.name.c_str());
        QCOMPARE(set[replan.devices[id->index]].name, set[node.device].name);
        QCOMPARE(back.node(*id).insertedCopy, node.insertedCopy);
        QCOMPARE(back.node(*id).outputs, node.outputs);
    }
    QCOMPARE(replan.copiedBytes(), plan.copiedBytes());
    // And writing the re-read plan gives the same bytes.
    auto again = writeOnnx(applyPlan(back, set, replan), set);
    QVERIFY(again);
    QCOMPARE(again.value().size(), bytes.value().size());
}

void TestOnnxReader::unknownOperatorStillLoads() {
    onnx::ModelProto model = reluModel();
    auto* custom = model.add_opset_import();
    custom->set_domain("com.example");
    custom->set_version(1);
    onnx::NodeProto* node = model.mutable_graph()->add_node();
    node->set_name("frob");
    node->set_domain("com.example");
    node->set_op_type("Frobnicate");
    node->add_input("y");
    node->add_output("z");
    auto* info = model.mutable_graph()->add_value_info();
    info->set_name("z");
    info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    info->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(6);
    model.mutable_graph()->mutable_output(0)->set_name("z");
    model.mutable_graph()
        ->mutable_output(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(0)
        ->set_dim_value(6);
    model.mutable_graph()
        ->mutable_output(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim()
        ->RemoveLast();
    auto loaded = loadModelText(bytesOf(model), "custom.onnx", GraphFormat::Onnx, std::nullopt);
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    const Graph& g = loaded.value().graph;
    const Node& frob = g.node(*g.find("frob"));
    QCOMPARE(frob.op->name, std::string("com.example.Frobnicate"));
    QVERIFY(!frob.op->hasAnyKernel());
    QCOMPARE(loaded.value().warnings,
             std::vector<std::string>{
                 "ops without a kernel on any device: com.example.Frobnicate (1 node)"});
    const Plan plan = planDevices(g, loaded.value().devices, PlanOptions{});
    QCOMPARE(test::describeConflicts(plan), QString("unsupported-op"));
    // It survives the JSON graph format too.
    const std::string json = writeJsonGraph(g, loaded.value().devices).dump();
    auto reread = loadModelText(json, "custom.json", GraphFormat::Auto, std::nullopt);
    QVERIFY2(reread, reread ? "" : reread.error().toString().c_str());
    QVERIFY(!reread.value().graph.node(*reread.value().graph.find("frob")).op->hasAnyKernel());
    QCOMPARE(writeJsonGraph(reread.value().graph, reread.value().devices).dump(), json);
}

void TestOnnxReader::externalDataBesideTheModel() {
    QTemporaryDir dir;
    onnx::ModelProto model = reluModel();
    onnx::TensorProto* weight = addInitializer(model, "w", {2, 3});
    weight->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    auto* location = weight->add_external_data();
    location->set_key("location");
    location->set_value("weights.bin");
    const float values[6] = {1, 2, 3, 4, 5, 6};
    QFile data(dir.filePath("weights.bin"));
    QVERIFY(data.open(QIODevice::WriteOnly));
    data.write(reinterpret_cast<const char*>(values), sizeof values);
    data.close();
    auto loaded = loadModelText(bytesOf(model), dir.filePath("m.onnx").toStdString(),
                                GraphFormat::Onnx, std::nullopt);
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    const Node& w = loaded.value().graph.node(*loaded.value().graph.find("w"));
    QCOMPARE(w.data->size(), sizeof values);
    QCOMPARE(std::memcmp(w.data->data(), values, sizeof values), 0);
    QVERIFY(w.data->isView()); // the data file's mapped pages, not a copy

    // A data file shorter than the tensor is an error naming both.
    QVERIFY(data.open(QIODevice::WriteOnly | QIODevice::Truncate));
    data.write(reinterpret_cast<const char*>(values), 8);
    data.close();
    auto truncated = loadModelText(bytesOf(model), dir.filePath("m.onnx").toStdString(),
                                   GraphFormat::Onnx, std::nullopt);
    QVERIFY(!truncated);
    QVERIFY2(
        truncated.error().message.find(
            "initializer 'w': external data file 'weights.bin' is too short (8 bytes, needs 24)") !=
            std::string::npos,
        truncated.error().toString().c_str());
}

/// Writes `bytes` to a new file at `path`; whether it could.
static bool writeFile(const QString& path, const std::string& bytes) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly) &&
           file.write(bytes.data(), static_cast<qint64>(bytes.size())) ==
               static_cast<qint64>(bytes.size());
}

/// Float weights of `dims` holding 0, 1, 2, ... as raw data.
static std::string countingWeights(onnx::ModelProto& model, const std::string& name,
                                   const std::vector<std::int64_t>& dims) {
    std::int64_t count = 1;
    for (std::int64_t d : dims)
        count *= d;
    std::vector<float> values(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = static_cast<float>(i % 1000) * 0.001f;
    std::string bytes(reinterpret_cast<const char*>(values.data()), values.size() * 4);
    addInitializer(model, name, dims)->set_raw_data(bytes);
    return bytes;
}

/// A model read from a file keeps its large initializers where they are: the constants view the
/// mapped file (nothing copied, nothing read until used), small ones are parsed as usual, and
/// folding at load reads no weights. From bytes without an owner the same model copies them.
void TestOnnxReader::weightsStayInTheFile() {
    installConstantFolding();
    onnx::ModelProto model = emptyModel("weights");
    onnx::GraphProto* g = model.mutable_graph();
    addValue(g->mutable_input(), "x", {4, 256});
    addValue(g->mutable_output(), "y", {4, 256});
    addValue(g->mutable_output(), "t", {512, 1024});
    addValue(g->mutable_output(), "s", {8, 4});
    const std::string w = countingWeights(model, "w", {256, 256});
    const std::string b = countingWeights(model, "b", {256});
    const std::string big = countingWeights(model, "big", {1024, 512});
    countingWeights(model, "small", {4, 8});
    addNode(model, "MatMul", {"x", "w"}, {"xw"});
    addNode(model, "Add", {"xw", "b"}, {"y"});
    addNode(model, "Transpose", {"big"}, {"t"});
    addNode(model, "Transpose", {"small"}, {"st"});
    addNode(model, "Identity", {"st"}, {"s"});
    QTemporaryDir dir;
    const QString path = dir.filePath("weights.onnx");
    QVERIFY(writeFile(path, bytesOf(model)));

    for (const bool mapped : {true, false}) {
        auto loaded =
            mapped ? load(path)
                   : loadModelText(bytesOf(model), "weights.onnx", GraphFormat::Onnx, std::nullopt);
        QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
        const Graph& graph = loaded.value().graph;
        const Node& weights = graph.node(*graph.find("w"));
        QCOMPARE(weights.data->isView(), mapped);
        QVERIFY(weights.data->bytes() == w);
        const Node& bias = graph.node(*graph.find("b"));
        QVERIFY(!bias.data->isView()); // 1 KiB: parsed with the graph
        QVERIFY(bias.data->bytes() == b);
        QCOMPARE(graph.node(*graph.find("big")).data->isView(), mapped);
        QVERIFY(graph.node(*graph.find("big")).data->bytes() == big);
        // A 2 MiB transpose is left to the run; the 128-byte one is folded.
        QCOMPARE(graph.node(*graph.find("t")).op->name, std::string("Transpose"));
        QVERIFY(!graph.find("st") || graph.node(*graph.find("st")).isConstant());
        QCOMPARE(graph.foldedNodes(), 1);

        // Writing through a view copies it first; the file is never changed.
        TensorData copy = *weights.data;
        copy.data()[0] = 'x';
        QVERIFY(!copy.isView());
        QVERIFY(weights.data->bytes() == w);
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll().toStdString(), bytesOf(model));
}

/// The host CPU's device runs on a mapped model's constants where they lie (nothing allocated
/// for them); a virtual CPU copies them into its arena; the reference reads them in place too;
/// all three agree.
/// y = x (4x512) times w (512x512), w's `values` in DIR/w.bin as ONNX external data, the model
/// in DIR/NAME.onnx; whether both were written.
static bool writeMatMulWithExternalWeights(const QTemporaryDir& dir, const std::string& name,
                                           const std::vector<float>& values) {
    onnx::ModelProto model = emptyModel(name);
    onnx::GraphProto* g = model.mutable_graph();
    addValue(g->mutable_input(), "x", {4, 512});
    addValue(g->mutable_output(), "y", {4, 512});
    onnx::TensorProto* w = addInitializer(model, "w", {512, 512});
    w->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    auto* location = w->add_external_data();
    location->set_key("location");
    location->set_value("w.bin");
    addNode(model, "MatMul", {"x", "w"}, {"y"});
    return writeFile(
               dir.filePath("w.bin"),
               std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4)) &&
           writeFile(dir.filePath(QString::fromStdString(name) + ".onnx"), bytesOf(model));
}

void TestOnnxReader::theHostReadsConstantsWhereTheyLie() {
    std::vector<float> values(512 * 512);
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = static_cast<float>(static_cast<int>(i % 17) - 8) / 8.0f;
    QTemporaryDir dir;
    QVERIFY(writeMatMulWithExternalWeights(dir, "inplace", values));
    auto loaded = load(dir.filePath("inplace.onnx"));
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    const Graph& graph = loaded.value().graph;
    QVERIFY(graph.node(*graph.find("w")).data->isView());

    const std::vector<HostTensor> inputs{randomTensor(TensorType{{4, 512}, DType::Float32}, 7)};
    DeviceRegistry registry;
    std::vector<std::vector<HostTensor>> outputs;
    const std::int64_t weightBytes = 512 * 512 * 4;
    for (Device* device : {registry.get("cpu").value(), registry.freshVCpu()}) {
        const SingleDevicePlan single = singleDevicePlan(graph);
        auto program = lowerToBytecode(single.graph, single.devices, single.plan);
        QVERIFY(program);
        auto executor = Executor::load(single.graph, single.devices, program.take(), {device},
                                       graph.onnxOpset());
        QVERIFY2(executor, executor ? "" : executor.error().message.c_str());
        const bool inPlace = device->kind() == DeviceKind::Cpu;
        QCOMPARE(device->bytesInUse() < weightBytes, inPlace);
        auto result = executor.value()->run(inputs, RunOptions{0, 1});
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        outputs.push_back(result.value().outputs);
    }
    auto reference = runReference(graph, inputs, graph.onnxOpset());
    QVERIFY2(reference, reference ? "" : reference.error().message.c_str());
    outputs.push_back(reference.value());
    for (const auto& out : outputs) {
        QCOMPARE(out.size(), std::size_t{1});
        QVERIFY(compareOutputs(out, outputs[0], 0, 0).ok);
    }
    // Rewritten in place after it was read (an exporter writing the same path again), the
    // weights file is refused with a sentence when a run loads, instead of a fault on a page
    // past its new end.
    QVERIFY(QFile::resize(dir.filePath("w.bin"), 4096));
    auto changed = runReference(graph, inputs, graph.onnxOpset());
    QVERIFY(!changed);
    QVERIFY2(changed.error().message.find("w.bin' changed on disk since it was read") !=
                 std::string::npos,
             changed.error().message.c_str());
    // The result is the product of x and the file's weights.
    const auto* x = reinterpret_cast<const float*>(inputs[0].data.data());
    const auto* y = reinterpret_cast<const float*>(outputs[0][0].data.data());
    double expected = 0;
    for (int k = 0; k < 512; ++k)
        expected += static_cast<double>(x[k]) * values[static_cast<std::size_t>(k) * 512 + 3];
    QVERIFY(std::abs(y[3] - expected) < 1e-3);
}

/// A model whose external data is larger than protobuf's 2 GiB limit plans and runs: a Gather
/// from a 2.4 GB table. The table is a sparse file the test writes (random rows where the input
/// reads, holes elsewhere) in a temporary folder; the host CPU reads the rows where they lie.
void TestOnnxReader::externalDataBeyondTwoGigabytes() {
    constexpr std::int64_t kRows = 600000, kWidth = 1024;
    const std::vector<std::int64_t> ids{0, 1000, 524300, kRows - 1};
    onnx::ModelProto model = emptyModel("huge");
    onnx::GraphProto* g = model.mutable_graph();
    addValue(g->mutable_output(), "y", {4, kWidth});
    onnx::TensorProto* table = addInitializer(model, "table", {kRows, kWidth});
    table->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    auto* entry = table->add_external_data();
    entry->set_key("location");
    entry->set_value("huge.onnx.data");
    onnx::TensorProto* indices = g->add_initializer();
    indices->set_name("ids");
    indices->set_data_type(onnx::TensorProto_DataType_INT64);
    indices->add_dims(static_cast<std::int64_t>(ids.size()));
    for (std::int64_t id : ids)
        indices->add_int64_data(id);
    addNode(model, "Gather", {"table", "ids"}, {"y"});

    QTemporaryDir dir;
    QFile data(dir.filePath("huge.onnx.data"));
    QVERIFY(data.open(QIODevice::ReadWrite));
    QVERIFY(data.resize(kRows * kWidth * 4));
    QVERIFY(data.size() > (std::int64_t{1} << 31));
    std::mt19937 random(42);
    std::uniform_real_distribution<float> uniform(-1, 1);
    std::vector<std::vector<float>> rows;
    for (std::int64_t id : ids) {
        std::vector<float> row(kWidth);
        for (float& v : row)
            v = uniform(random);
        QVERIFY(data.seek(id * kWidth * 4));
        QCOMPARE(data.write(reinterpret_cast<const char*>(row.data()), kWidth * 4), kWidth * 4);
        rows.push_back(std::move(row));
    }
    data.close();
    QVERIFY(writeFile(dir.filePath("huge.onnx"), bytesOf(model)));
    auto loaded = load(dir.filePath("huge.onnx"));
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    const Graph& graph = loaded.value().graph;
    QCOMPARE(graph.node(*graph.find("table")).data->size(),
             static_cast<std::size_t>(kRows * kWidth * 4));
    const Plan plan = planDevices(graph, loaded.value().devices, PlanOptions{});
    QVERIFY(plan.conflicts.empty());
    auto outputs = runReference(graph, {}, graph.onnxOpset());
    QVERIFY2(outputs, outputs ? "" : outputs.error().message.c_str());
    QCOMPARE(outputs.value().size(), std::size_t{1});
    QCOMPARE(outputs.value()[0].type.shape, (std::vector<std::int64_t>{4, kWidth}));
    const auto* y = reinterpret_cast<const float*>(outputs.value()[0].data.data());
    for (std::size_t r = 0; r < rows.size(); ++r)
        QVERIFY(std::equal(rows[r].begin(), rows[r].end(), y + r * kWidth));
}

void TestOnnxReader::badInput_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");

    QFile file(kModels + "tiny_resnet.onnx");
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray good = file.readAll();
    QTest::newRow("empty-file") << QByteArray() << "the file is empty";
    QTest::newRow("truncated") << good.left(good.size() / 2)
                               << "not an ONNX model: the protobuf does not parse";
    QTest::newRow("wrong-magic") << QByteArray("PK\x03\x04 a zip file, not a model")
                                 << "not an ONNX model";

    auto proto = [](const onnx::ModelProto& m) { return QByteArray::fromStdString(bytesOf(m)); };
    {
        onnx::ModelProto m = reluModel();
        m.clear_graph();
        QTest::newRow("parses-but-no-graph") << proto(m) << "not an ONNX model: no graph";
    }
    {
        onnx::ModelProto m = reluModel();
        m.mutable_graph()->mutable_node(0)->set_op_type("Relu");
        m.mutable_graph()->mutable_node(0)->add_input("x");
        QTest::newRow("invalid-model") << proto(m) << "not a valid ONNX model";
    }
    {
        onnx::ModelProto m = reluModel();
        m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
        QTest::newRow("dangling-input")
            << proto(m)
            << "node 'relu' reads 'nowhere', which no node, input or initializer produces";
    }
    {
        onnx::ModelProto m = reluModel();
        onnx::NodeProto* a = m.mutable_graph()->mutable_node(0);
        a->set_input(0, "b_out");
        a->set_output(0, "a_out");
        onnx::NodeProto* b = m.mutable_graph()->add_node();
        b->set_name("b");
        b->set_op_type("Relu");
        b->add_input("a_out");
        b->add_output("b_out");
        QTest::newRow("cycle") << proto(m) << "node 'relu' is part of a cycle";
    }
    {
        onnx::ModelProto m = reluModel();
        addInitializer(m, "w", {3, -2});
        QTest::newRow("negative-dimension")
            << proto(m) << "tensor 'w' has a negative dimension (-2)";
    }
    {
        onnx::ModelProto m = reluModel();
        auto* shape = m.mutable_graph()
                          ->mutable_input(0)
                          ->mutable_type()
                          ->mutable_tensor_type()
                          ->mutable_shape();
        shape->mutable_dim(0)->set_dim_value(1LL << 30);
        shape->mutable_dim(1)->set_dim_value(1LL << 30);
        QTest::newRow("absurd-input") << proto(m) << "value 'x' claims more than 10^12 elements";
    }
    {
        onnx::ModelProto m = reluModel();
        addInitializer(m, "huge", {1000000, 1000000, 10});
        QTest::newRow("absurd-tensor")
            << proto(m) << "tensor 'huge' claims more than 10^12 elements";
    }
    {
        onnx::ModelProto m = reluModel();
        onnx::TensorProto* w = addInitializer(m, "w", {4});
        w->set_raw_data(std::string(8, '\0'));
        QTest::newRow("data-size-mismatch")
            << proto(m) << "initializer 'w' holds 8 bytes of data but its dims need 16";
    }
    for (const char* location : {"../secret.bin", "/etc/passwd", "sub/../../x.bin"}) {
        onnx::ModelProto m = reluModel();
        onnx::TensorProto* w = addInitializer(m, "w", {4});
        w->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
        auto* entry = w->add_external_data();
        entry->set_key("location");
        entry->set_value(location);
        QTest::newRow(("external-data-" + std::string(location)).c_str())
            << proto(m) << "initializer 'w' points to external data";
    }
    {
        // Found by fuzz_onnx_reader: ONNX's own shape inference divides by the stride.
        onnx::ModelProto m;
        m.ParseFromString(good.toStdString());
        for (onnx::NodeProto& node : *m.mutable_graph()->mutable_node()) {
            if (node.op_type() != "Conv")
                continue;
            for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
                if (attr.name() == "strides")
                    attr.set_ints(1, 0);
            }
            break;
        }
        QTest::newRow("zero-stride")
            << proto(m) << "Conv attribute 'strides' must be positive, not 0";
    }
    {
        // An old opset with a node of another domain: ONNX's converter cannot take it.
        onnx::ModelProto m = reluModel();
        m.mutable_opset_import(0)->set_version(9);
        auto* custom = m.add_opset_import();
        custom->set_domain("com.example");
        custom->set_version(1);
        m.mutable_graph()->mutable_node(0)->set_domain("com.example");
        QTest::newRow("old-opset-unconvertible")
            << proto(m) << "which ONNX's version converter cannot convert; re-export it";
    }
    {
        onnx::ModelProto m = reluModel();
        addInitializer(m, "z", {2})->set_data_type(onnx::TensorProto_DataType_COMPLEX64);
        QTest::newRow("unsupported-element-type")
            << proto(m) << "initializer 'z' has an unsupported element type (14)";
    }
}

namespace {

/// A graph attribute of `node` (a body), its graph named after the attribute.
onnx::GraphProto* addBody(onnx::NodeProto* node, const std::string& attribute) {
    onnx::AttributeProto* attr = node->add_attribute();
    attr->set_name(attribute);
    attr->set_type(onnx::AttributeProto_AttributeType_GRAPH);
    attr->mutable_g()->set_name(attribute);
    return attr->mutable_g();
}

constexpr int kFloat = onnx::TensorProto_DataType_FLOAT;
constexpr int kInt64 = onnx::TensorProto_DataType_INT64;
constexpr int kBool = onnx::TensorProto_DataType_BOOL;

/// Names a value and gives it an element type, and with `dims` a static shape (without, shape
/// inference gives it one).
void setType(onnx::ValueInfoProto* info, const std::string& name, int elemType,
             const std::optional<std::vector<std::int64_t>>& dims = std::nullopt) {
    info->set_name(name);
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elemType);
    if (!dims)
        return;
    auto* shape = tensor->mutable_shape();
    for (std::int64_t d : *dims)
        shape->add_dim()->set_dim_value(d);
}

onnx::TensorProto* addInt64s(onnx::ModelProto& model, const std::string& name,
                             std::vector<std::int64_t> values, bool scalar = false) {
    onnx::TensorProto* tensor = model.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto_DataType_INT64);
    if (!scalar)
        tensor->add_dims(static_cast<std::int64_t>(values.size()));
    for (std::int64_t v : values)
        tensor->add_int64_data(v);
    return tensor;
}

void setShape(onnx::ValueInfoProto* info,
              std::vector<std::variant<std::int64_t, std::string>> dims) {
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    type->clear_shape();
    for (const auto& d : dims) {
        auto* dim = type->mutable_shape()->add_dim();
        if (std::holds_alternative<std::int64_t>(d))
            dim->set_dim_value(std::get<std::int64_t>(d));
        else
            dim->set_dim_param(std::get<std::string>(d));
    }
}

/// x [batch, 3, 4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) -> y [batch, 12],
/// the pattern PyTorch exports for x.view(x.size(0), -1).
onnx::ModelProto flattenByShapeModel() {
    onnx::ModelProto model = emptyModel("flatten");
    onnx::GraphProto* g = model.mutable_graph();
    setShape(g->add_input(), {std::string("batch"), std::int64_t{3}, std::int64_t{4}});
    g->mutable_input(0)->set_name("x");
    setShape(g->add_output(), {std::string("batch"), std::int64_t{12}});
    g->mutable_output(0)->set_name("y");
    addInt64s(model, "zero", {0}, true);
    addInt64s(model, "axes", {0});
    addInt64s(model, "rest", {-1});
    addNode(model, "Shape", {"x"}, {"shape"});
    addNode(model, "Gather", {"shape", "zero"}, {"batch_size"});
    addNode(model, "Unsqueeze", {"batch_size", "axes"}, {"batch_1d"});
    addNode(model, "Concat", {"batch_1d", "rest"}, {"target"})->add_attribute()->CopyFrom([] {
        onnx::AttributeProto axis;
        axis.set_name("axis");
        axis.set_type(onnx::AttributeProto_AttributeType_INT);
        axis.set_i(0);
        return axis;
    }());
    addNode(model, "Reshape", {"x", "target"}, {"y"});
    return model;
}

} // namespace

void TestOnnxReader::foldingStartsNoThreads() {
    // Folding runs kernels on the loading thread. A oneDNN kernel there, with OpenMP's default
    // of a thread per core, would leave the thread a team of helpers for the process's life,
    // and libgomp, keeping more threads than cores, then makes every context's helpers sleep
    // between kernels: two-thread contexts ran small models twice as slowly after a fold.
    installConstantFolding();
    const auto threads = [] {
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& task :
             std::filesystem::directory_iterator("/proc/self/task"))
            ++n;
        return n;
    };
    onnx::ModelProto model = emptyModel("fold");
    onnx::GraphProto* g = model.mutable_graph();
    setShape(g->add_input(), {std::int64_t{256}, std::int64_t{256}});
    g->mutable_input(0)->set_name("x");
    setShape(g->add_output(), {std::int64_t{256}, std::int64_t{256}});
    g->mutable_output(0)->set_name("y");
    for (const char* name : {"a", "b"}) {
        onnx::TensorProto* t = addInitializer(model, name, {256, 256});
        for (int i = 0; i < 256 * 256; ++i)
            t->add_float_data(static_cast<float>(i % 7));
    }
    addNode(model, "Add", {"a", "b"}, {"sum"});
    addNode(model, "Add", {"x", "sum"}, {"y"});
    const std::size_t before = threads();
    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    auto graph =
        readOnnx(bytesOf(model), "fold.onnx", &devices, true, &warnings, OnnxReadOptions{});
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    const Node& y = graph.value().node(*graph.value().find("y"));
    const bool folded = graph.value().node(y.inputs[1].node).isConstant();
    setConstantEvaluator(nullptr); // the tests before folding was installed expect none
    QVERIFY(folded);
    QCOMPARE(threads(), before);
}

void TestOnnxReader::oldOpsetIsConverted() {
    onnx::ModelProto model = reluModel();
    model.mutable_opset_import(0)->set_version(9);
    auto loaded = loadModelText(bytesOf(model), "old.onnx", GraphFormat::Onnx, std::nullopt);
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    QCOMPARE(loaded.value().graph.onnxOpset(), 13);
    const auto& warnings = loaded.value().warnings;
    QVERIFY(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
        return w.find("uses opset 9; it was converted to opset 13 with ONNX's version converter") !=
               std::string::npos;
    }));
}

void TestOnnxReader::shapeSubgraphsFoldAtLoad() {
    installConstantFolding();
    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    OnnxReadOptions options;
    options.inputShapes["x"] = {5, 3, 4};
    auto graph = readOnnx(bytesOf(flattenByShapeModel()), "flatten.onnx", &devices, true, &warnings,
                          options);
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    const Graph& g = graph.value();
    QStringList ops;
    for (std::uint32_t i = 0; i < g.size(); ++i) {
        if (g.node(NodeId(i)).op->role == OpRole::Compute)
            ops << QString::fromStdString(g.node(NodeId(i)).op->name);
    }
    QCOMPARE(ops, QStringList{"Reshape"}); // Shape, Gather, Unsqueeze and Concat were folded
    const Node& reshape = g.node(*g.find("y"));
    QVERIFY(g.node(reshape.inputs[1].node).isConstant());
    QCOMPARE(g.type(reshape.inputs[1]).shape, (std::vector<std::int64_t>{2}));
    QCOMPARE(g.type(ValueRef{*g.find("y"), 0}).shape, (std::vector<std::int64_t>{5, 12}));
    QCOMPARE(g.onnxOpset(), 13);
    const auto folded = std::find_if(g.properties.begin(), g.properties.end(),
                                     [](const auto& p) { return p.first == "onnx.folded_nodes"; });
    QVERIFY(folded != g.properties.end());
    QCOMPARE(folded->second, std::string("4"));
    // Without the shape, the batch dimension is planned as 1 with a warning, and still folds.
    warnings.clear();
    auto unshaped = readOnnx(bytesOf(flattenByShapeModel()), "flatten.onnx", &devices, true,
                             &warnings, OnnxReadOptions{});
    QVERIFY2(unshaped, unshaped ? "" : unshaped.error().toString().c_str());
    QCOMPARE(unshaped.value().type(ValueRef{*unshaped.value().find("y"), 0}).shape,
             (std::vector<std::int64_t>{1, 12}));
}

void TestOnnxReader::foldingIsBounded() {
    installConstantFolding();
    // ConstantOfShape([4096, 4096]) makes 64 MiB from 16 bytes: not folded, it stays a node.
    onnx::ModelProto model = emptyModel("bounded");
    onnx::GraphProto* g = model.mutable_graph();
    setShape(g->add_input(), {std::int64_t{4096}, std::int64_t{4096}});
    g->mutable_input(0)->set_name("x");
    setShape(g->add_output(), {std::int64_t{4096}, std::int64_t{4096}});
    g->mutable_output(0)->set_name("y");
    addInt64s(model, "dims", {4096, 4096});
    addNode(model, "ConstantOfShape", {"dims"}, {"big"});
    addNode(model, "Add", {"x", "big"}, {"y"});
    auto loaded = loadModelText(bytesOf(model), "big.onnx", GraphFormat::Onnx, std::nullopt);
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    const Graph& graph = loaded.value().graph;
    QVERIFY(graph.find("big").has_value());
    QCOMPARE(graph.node(*graph.find("big")).op->name, std::string("ConstantOfShape"));
}

void TestOnnxReader::inputShapesFixSymbolicDimensions() {
    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    OnnxReadOptions options;
    options.inputShapes["x"] = {7, 3, 4};
    auto graph = readOnnx(bytesOf(flattenByShapeModel()), "flatten.onnx", &devices, true, &warnings,
                          options);
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    QCOMPARE(graph.value().type(ValueRef{*graph.value().find("x"), 0}).shape,
             (std::vector<std::int64_t>{7, 3, 4}));
    for (const std::string& w : warnings)
        QVERIFY2(w.find("not fixed") == std::string::npos, w.c_str());
    const std::pair<std::map<std::string, std::vector<std::int64_t>>, std::string> bad[] = {
        {{{"x", {7, 3}}}, "input 'x' has rank 3, but the shape given for it has 2 dimensions"},
        {{{"x", {7, 5, 4}}}, "input 'x' has dimension 1 fixed at 3; the shape given says 5"},
        {{{"z", {1}}},
         "a shape is given for 'z', which is not an input of the graph (its "
         "inputs: x)"},
    };
    for (const auto& [shapes, message] : bad) {
        OnnxReadOptions wrong;
        wrong.inputShapes = shapes;
        auto failed = readOnnx(bytesOf(flattenByShapeModel()), "flatten.onnx", &devices, true,
                               &warnings, wrong);
        QVERIFY(!failed);
        QCOMPARE(failed.error().file, std::string("flatten.onnx"));
        QVERIFY2(failed.error().message.find(message) != std::string::npos,
                 failed.error().message.c_str());
    }
}

void TestOnnxReader::functionsWithoutKernelsAreExpanded() {
    // MeanVarianceNormalization has no kernel; ONNX defines it as a function of ReduceMean,
    // Sub, Mul, Sqrt and Div, which the reader inlines.
    onnx::ModelProto model = reluModel();
    onnx::GraphProto* g = model.mutable_graph();
    setShape(g->mutable_input(0),
             {std::int64_t{2}, std::int64_t{3}, std::int64_t{4}, std::int64_t{5}});
    setShape(g->mutable_output(0),
             {std::int64_t{2}, std::int64_t{3}, std::int64_t{4}, std::int64_t{5}});
    g->mutable_node(0)->set_op_type("MeanVarianceNormalization");
    auto loaded = loadModelText(bytesOf(model), "mvn.onnx", GraphFormat::Onnx, std::nullopt);
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    const Graph& graph = loaded.value().graph;
    int compute = 0;
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const OpDef* op = graph.node(NodeId(i)).op;
        if (op->role != OpRole::Compute)
            continue;
        ++compute;
        QVERIFY2(op->hasAnyKernel(), op->name.c_str());
        QVERIFY(op->name != "MeanVarianceNormalization");
    }
    QVERIFY(compute >= 5);
    QCOMPARE(graph.outputs().size(), std::size_t{1});
}

void TestOnnxReader::badInput() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const std::string path = dir.filePath("model.onnx").toStdString();
    auto loaded = loadModelText(bytes.toStdString(), path, GraphFormat::Onnx, std::nullopt);
    QVERIFY2(!loaded, "expected an error");
    QCOMPARE(loaded.error().file, path);
    QVERIFY2(QString::fromStdString(loaded.error().message).contains(message),
             loaded.error().toString().c_str());
}

namespace {

/// x [2, 3] -> NonZero -> nz, and with `consumer` a Transpose of nz as the output instead.
onnx::ModelProto nonZeroModel(bool consumer) {
    onnx::ModelProto model = emptyModel("nonzero");
    onnx::GraphProto* g = model.mutable_graph();
    setShape(g->add_input(), {std::int64_t{2}, std::int64_t{3}});
    g->mutable_input(0)->set_name("x");
    addNode(model, "NonZero", {"x"}, {"nz"});
    if (consumer)
        addNode(model, "Transpose", {"nz"}, {"t"});
    onnx::ValueInfoProto* out = g->add_output();
    out->set_name(consumer ? "t" : "nz");
    auto* type = out->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto_DataType_INT64);
    type->mutable_shape()->add_dim()->set_dim_param("a");
    type->mutable_shape()->add_dim()->set_dim_param("b");
    return model;
}

/// The executor refers to `single`'s graph, which must outlive it.
Result<std::unique_ptr<Executor>> loadOnVCpu(const SingleDevicePlan& single,
                                             DeviceRegistry& registry) {
    auto program = lowerToBytecode(single.graph, single.devices, single.plan);
    if (!program)
        return program.error();
    std::vector<std::string> warnings;
    auto mapping = mapDevices(single.devices, {{"reference", "vcpu1"}}, registry, &warnings);
    if (!mapping)
        return mapping.error();
    return Executor::load(single.graph, single.devices, program.take(), mapping.take(),
                          single.graph.onnxOpset());
}

/// x [2,3] and c (bool) in; w [3] a weight every body reads from outside.
///  - If(c): x + w, else x * w.
///  - Loop, trip count 4: acc += w, each step's acc stacked as a scan output [4, 2, 3].
///  - Scan over x's rows backwards: s += row; each step's s * w stacked as [2, 3].
/// Body values have element types only: inference gives their shapes.
onnx::ModelProto controlFlowModel() {
    onnx::ModelProto model = emptyModel("control");
    onnx::GraphProto* g = model.mutable_graph();
    setShape(g->add_input(), {std::int64_t{2}, std::int64_t{3}});
    g->mutable_input(0)->set_name("x");
    setType(g->add_input(), "c", kBool, std::vector<std::int64_t>{});
    onnx::TensorProto* w = addInitializer(model, "w", {3});
    for (float v : {1.0f, 2.0f, 3.0f})
        w->add_float_data(v);
    addInt64s(model, "n", {4}, true);
    onnx::TensorProto* zero = addInitializer(model, "s0", {3});
    for (int k = 0; k < 3; ++k)
        zero->add_float_data(0);

    onnx::NodeProto* branch = addNode(model, "If", {"c"}, {"chosen"});
    for (const auto& [attribute, op] : {std::pair{"then_branch", "Add"}, {"else_branch", "Mul"}}) {
        onnx::GraphProto* body = addBody(branch, attribute);
        addNode(body, op, {"x", "w"}, {std::string(attribute) + "_out"});
        setType(body->add_output(), std::string(attribute) + "_out", kFloat);
    }

    onnx::NodeProto* loop = addNode(model, "Loop", {"n", "", "x"}, {"acc", "steps"});
    onnx::GraphProto* loopBody = addBody(loop, "body");
    setType(loopBody->add_input(), "i", kInt64);
    setType(loopBody->add_input(), "cond_in", kBool);
    setType(loopBody->add_input(), "acc_in", kFloat);
    addNode(loopBody, "Identity", {"cond_in"}, {"cond_out"});
    addNode(loopBody, "Add", {"acc_in", "w"}, {"acc_out"});
    addNode(loopBody, "Identity", {"acc_out"}, {"step"});
    setType(loopBody->add_output(), "cond_out", kBool);
    setType(loopBody->add_output(), "acc_out", kFloat);
    setType(loopBody->add_output(), "step", kFloat);

    onnx::NodeProto* scan = addNode(model, "Scan", {"s0", "x"}, {"total", "scaled"});
    onnx::AttributeProto* count = scan->add_attribute();
    count->set_name("num_scan_inputs");
    count->set_type(onnx::AttributeProto_AttributeType_INT);
    count->set_i(1);
    onnx::AttributeProto* directions = scan->add_attribute();
    directions->set_name("scan_input_directions");
    directions->set_type(onnx::AttributeProto_AttributeType_INTS);
    directions->add_ints(1);
    onnx::GraphProto* scanBody = addBody(scan, "body");
    setType(scanBody->add_input(), "s_in", kFloat);
    setType(scanBody->add_input(), "row", kFloat);
    addNode(scanBody, "Add", {"s_in", "row"}, {"s_out"});
    addNode(scanBody, "Mul", {"s_out", "w"}, {"y"});
    setType(scanBody->add_output(), "s_out", kFloat);
    setType(scanBody->add_output(), "y", kFloat);

    const std::int64_t two = 2, three = 3;
    const std::vector<std::pair<const char*, std::vector<std::variant<std::int64_t, std::string>>>>
        outputs{{"chosen", {two, three}},
                {"acc", {two, three}},
                {"steps", {std::string("steps"), two, three}},
                {"total", {three}},
                {"scaled", {two, three}}};
    for (const auto& [name, shape] : outputs) {
        onnx::ValueInfoProto* output = g->add_output();
        setShape(output, shape);
        output->set_name(name);
    }
    return model;
}

/// A Loop whose body holds an If, whose branches read the loop's carried value and a weight of
/// the outermost graph: y = x, then n times y += w on even steps and y -= w on odd ones.
onnx::ModelProto nestedControlFlowModel() {
    onnx::ModelProto model = emptyModel("nested");
    onnx::GraphProto* g = model.mutable_graph();
    const std::vector<std::int64_t> scalar, vector{3};
    setType(g->add_input(), "x", kFloat, vector);
    setType(g->add_input(), "n", kInt64, scalar);
    setType(g->add_output(), "y", kFloat, vector);
    onnx::TensorProto* w = addInitializer(model, "w", {3});
    for (float v : {1.0f, 2.0f, 3.0f})
        w->add_float_data(v);
    addInt64s(model, "two", {2}, true);
    addInt64s(model, "zero", {0}, true);

    onnx::NodeProto* loop = addNode(model, "Loop", {"n", "", "x"}, {"y"});
    onnx::GraphProto* body = addBody(loop, "body");
    setType(body->add_input(), "i", kInt64, scalar);
    setType(body->add_input(), "c", kBool, scalar);
    setType(body->add_input(), "acc_in", kFloat, vector);
    setType(body->add_output(), "c_out", kBool, scalar);
    setType(body->add_output(), "acc_out", kFloat, vector);
    addNode(body, "Identity", {"c"}, {"c_out"});
    addNode(body, "Mod", {"i", "two"}, {"r"});
    addNode(body, "Equal", {"r", "zero"}, {"even"});
    onnx::NodeProto* branch = addNode(body, "If", {"even"}, {"acc_out"});
    for (const auto& [name, op] : {std::pair{"then_branch", "Add"}, {"else_branch", "Sub"}}) {
        onnx::GraphProto* arm = addBody(branch, name);
        addNode(arm, op, {"acc_in", "w"}, {std::string(name) + "_out"});
        setType(arm->add_output(), std::string(name) + "_out", kFloat, vector);
    }
    return model;
}

std::vector<float> floatsOf(const HostTensor& tensor) {
    std::vector<float> values(static_cast<std::size_t>(tensor.type.elementCount()));
    std::memcpy(values.data(), tensor.data.data(), values.size() * sizeof(float));
    return values;
}

/// Runs a control-flow graph on one vcpu with x = 0..5 and the condition given.
std::vector<HostTensor> runControlFlow(const Graph& graph, bool condition) {
    DeviceRegistry registry;
    const SingleDevicePlan single = singleDevicePlan(graph);
    auto executor = loadOnVCpu(single, registry);
    if (!executor)
        qFatal("%s", executor.error().message.c_str());
    HostTensor x{TensorType{{2, 3}, DType::Float32}, TensorData(24, '\0')};
    const std::vector<float> values{0, 1, 2, 3, 4, 5};
    std::memcpy(x.data.data(), values.data(), 24);
    HostTensor c{TensorType{{}, DType::Bool}, TensorData(1, condition ? '\1' : '\0')};
    auto result = executor.value()->run({x, c}, RunOptions{0, 1});
    if (!result)
        qFatal("%s", result.error().message.c_str());
    return result.value().outputs;
}

void checkControlFlowOutputs(const Graph& graph) {
    for (bool condition : {true, false}) {
        const std::vector<HostTensor> out = runControlFlow(graph, condition);
        QCOMPARE(out.size(), std::size_t{5});
        const std::vector<float> chosen = condition ? std::vector<float>{1, 3, 5, 4, 6, 8}
                                                    : std::vector<float>{0, 2, 6, 3, 8, 15};
        QCOMPARE(floatsOf(out[0]), chosen);
        QCOMPARE(floatsOf(out[1]), (std::vector<float>{4, 9, 14, 7, 12, 17}));
        QCOMPARE(out[2].type.shape, (std::vector<std::int64_t>{4, 2, 3}));
        const std::vector<float> steps = floatsOf(out[2]);
        QCOMPARE(std::vector<float>(steps.begin(), steps.begin() + 6),
                 (std::vector<float>{1, 3, 5, 4, 6, 8}));
        QCOMPARE(std::vector<float>(steps.end() - 6, steps.end()),
                 (std::vector<float>{4, 9, 14, 7, 12, 17}));
        // Backwards over the rows: s is [3,4,5] after the first step, [3,5,7] after the
        // second; the scan output stacks the steps in the order they ran.
        QCOMPARE(floatsOf(out[3]), (std::vector<float>{3, 5, 7}));
        QCOMPARE(floatsOf(out[4]), (std::vector<float>{3, 8, 15, 3, 10, 21}));
    }
}

} // namespace

void TestOnnxReader::controlFlowRunsItsBodiesOnItsDevice() {
    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    auto graph = readOnnx(bytesOf(controlFlowModel()), "control.onnx", &devices, true, &warnings,
                          OnnxReadOptions{});
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    const Graph& g = graph.value();
    // Each node is one op: its bodies are graphs of their own, the outer values they read are
    // its last inputs (so the plan sees them as data flow).
    const Node& branch = g.node(*g.find("chosen"));
    QCOMPARE(branch.subgraphs.size(), std::size_t{2});
    QCOMPARE(branch.subgraphs[0].attribute, std::string("then_branch"));
    QCOMPARE(branch.captures, 2u);
    QCOMPARE(branch.ownInputs(), std::size_t{1});
    QCOMPARE(g.valueName(branch.inputs[1]), std::string("x"));
    const Node& loop = g.node(*g.find("acc"));
    QCOMPARE(loop.captures, 1u);
    QCOMPARE(loop.outputs[1].shape, (std::vector<std::int64_t>{4, 2, 3})); // exactly 4 steps
    QCOMPARE(bodyNodeCount(loop), std::size_t{3});
    QCOMPARE(describeBodies(loop).front(), std::string("body: 3 ops (Add, Identity \u00d72)"));
    QVERIFY(nodeRunsOn(loop, DeviceKind::Cuda, DType::Int64));
    const Node& scan = g.node(*g.find("total"));
    QCOMPARE(scan.outputs[1].shape, (std::vector<std::int64_t>{2, 3}));
    checkControlFlowOutputs(g);

    // Written as ONNX and read again: the bodies read the outer values under their new names.
    auto written = writeOnnx(g, devices, {});
    QVERIFY2(written, written ? "" : written.error().message.c_str());
    auto again =
        readOnnx(written.value(), "again.onnx", &devices, true, &warnings, OnnxReadOptions{});
    QVERIFY2(again, again ? "" : again.error().toString().c_str());
    checkControlFlowOutputs(again.value());

    // The JSON graph keeps the bodies too (plans are stored that way).
    auto json = readJsonGraph(writeJsonGraph(g, devices), devices, "control.json");
    QVERIFY2(json, json ? "" : json.error().toString().c_str());
    const Node& stored = json.value().node(*json.value().find("chosen"));
    QCOMPARE(stored.subgraphs.size(), std::size_t{2});
    QCOMPARE(stored.captures, 2u);
    QCOMPARE(bodyNodeCount(stored), std::size_t{2});
}

void TestOnnxReader::nestedBodiesReadTheOutermostGraph() {
    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    auto graph = readOnnx(bytesOf(nestedControlFlowModel()), "nested.onnx", &devices, true,
                          &warnings, OnnxReadOptions{});
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    const Node& loop = graph.value().node(*graph.value().find("y"));
    // The body reads two and zero, and the If inside it reads w: the body reads all three from
    // the outermost graph (in order of first use), and the If reads w from the body.
    QCOMPARE(loop.captures, 3u);
    QCOMPARE(graph.value().valueName(loop.inputs[2]), std::string("two"));
    QCOMPARE(graph.value().valueName(loop.inputs.back()), std::string("w"));
    const Graph& body = *loop.subgraphs[0].graph;
    const Node& branch = body.node(*body.find("acc_out"));
    QCOMPARE(branch.subgraphs.size(), std::size_t{2});
    QCOMPARE(branch.captures, 2u);                 // acc_in and w
    QCOMPARE(bodyNodeCount(loop), std::size_t{6}); // Identity, Mod, Equal, If, Add, Sub

    DeviceRegistry registry;
    const SingleDevicePlan single = singleDevicePlan(graph.value());
    auto executor = loadOnVCpu(single, registry);
    QVERIFY2(executor, executor ? "" : executor.error().message.c_str());
    for (const std::int64_t steps : {0, 1, 2, 5}) {
        HostTensor x{TensorType{{3}, DType::Float32}, TensorData(12, '\0')};
        const std::vector<float> start{10, 20, 30};
        std::memcpy(x.data.data(), start.data(), 12);
        HostTensor n{TensorType{{}, DType::Int64}, TensorData(8, '\0')};
        std::memcpy(n.data.data(), &steps, 8);
        auto result = executor.value()->run({x, n}, RunOptions{0, 1});
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        // +w, -w, +w, ...: w once after an odd number of steps, nothing after an even one.
        const float k = steps % 2 == 1 ? 1.0f : 0.0f;
        QCOMPARE(floatsOf(result.value().outputs.at(0)),
                 (std::vector<float>{10 + k, 20 + 2 * k, 30 + 3 * k}));
    }
}

void TestOnnxReader::aDeviceRunsControlFlowOnlyWithKernelsForItsBody() {
    // A Loop whose body multiplies int32 matrices: the CPU has such a kernel, CUDA has not.
    const TensorType matrix{{2, 2}, DType::Int32};
    auto body = std::make_shared<Graph>();
    Node param;
    param.name = "m";
    param.op = &OpRegistry::global().parameter();
    param.outputs = {matrix};
    const NodeId m = body->addNode(param);
    Node product;
    product.name = "product";
    product.op = OpRegistry::global().find("MatMul");
    product.inputs = {ValueRef{m, 0}, ValueRef{m, 0}};
    product.outputs = {matrix};
    body->addOutput(GraphOutput{ValueRef{body->addNode(product), 0}, DeviceId(), ""});

    Graph graph;
    param.name = "x";
    const NodeId x = graph.addNode(param);
    Node loop;
    loop.name = "loop";
    loop.op = OpRegistry::global().find("Loop");
    loop.inputs = {ValueRef{x, 0}};
    loop.captures = 1;
    loop.outputs = {matrix};
    loop.subgraphs = {Subgraph{"body", body, nullptr}};
    QVERIFY(nodeRunsOn(loop, DeviceKind::Cpu, DType::Int32));
    QVERIFY(!nodeRunsOn(loop, DeviceKind::Cuda, DType::Int32));
    const DeviceSet set = test::devices("cpu:cpu,gpu:cuda");
    loop.pin = Pin{PinKind::Plain, *set.find("gpu"), "test"};
    const NodeId id = graph.addNode(loop);
    graph.addOutput(GraphOutput{ValueRef{id, 0}, DeviceId(), "y"});

    // Pinned to the GPU anyway: it runs on the CPU, and the conflict says why.
    const Plan plan = planDevices(graph, set, PlanOptions{});
    QCOMPARE(set[plan.devices[id.index]].name, std::string("cpu"));
    QCOMPARE(plan.conflicts.size(), std::size_t{1});
    QVERIFY2(plan.conflicts[0].message.find("no kernel for every operator in the body of this "
                                            "Loop") != std::string::npos,
             plan.conflicts[0].message.c_str());

    // This body is no Loop body (no iteration number, no condition): a graph written by hand
    // can say so; loading it is refused with a sentence, before anything runs.
    DeviceRegistry registry;
    const SingleDevicePlan single = singleDevicePlan(graph);
    auto refused = loadOnVCpu(single, registry);
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.find("Loop 'loop', body has 1 inputs; it needs 2 and one "
                                          "per captured value (1)") != std::string::npos,
             refused.error().message.c_str());
}

void TestOnnxReader::controlFlowBodiesMustKeepTheirShapes() {
    // A carried value that grows each step (Concat with itself) cannot keep one shape: the Loop
    // is unrolled where its trip count is known at load (here the constant 4: 2 rows become
    // 32), and runs node by node where it comes at run time.
    for (const bool tripsAtRunTime : {false, true}) {
        DeviceSet devices = defaultDeviceSet();
        std::vector<std::string> warnings;
        onnx::ModelProto model = controlFlowModel();
        onnx::GraphProto* g = model.mutable_graph();
        onnx::GraphProto* body = nullptr;
        for (onnx::NodeProto& node : *g->mutable_node()) {
            if (node.op_type() == "Loop") {
                body = node.mutable_attribute(0)->mutable_g();
                if (tripsAtRunTime)
                    node.set_input(0, "trips");
            }
        }
        QVERIFY(body);
        if (tripsAtRunTime)
            setType(g->add_input(), "trips", kInt64, std::vector<std::int64_t>{});
        onnx::NodeProto* add = body->mutable_node(1);
        add->set_op_type("Concat");
        add->set_input(1, "acc_in");
        onnx::AttributeProto* axis = add->add_attribute();
        axis->set_name("axis");
        axis->set_type(onnx::AttributeProto_AttributeType_INT);
        axis->set_i(0);
        // The outputs the Loop makes now have sizes the model cannot declare.
        for (onnx::ValueInfoProto& output : *g->mutable_output()) {
            if (output.name() == "acc")
                setShape(&output, {std::string("rows"), std::int64_t{3}});
            if (output.name() == "steps")
                setShape(&output, {std::string("steps"), std::string("rows"), std::int64_t{3}});
        }
        auto graph =
            readOnnx(bytesOf(model), "grow.onnx", &devices, true, &warnings, OnnxReadOptions{});
        if (!tripsAtRunTime) {
            QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
            const Graph& loaded = graph.value();
            QVERIFY(!opCounts(loaded).count("Loop"));
            QCOMPARE(QString::fromStdString(loaded.type(loaded.outputs()[1].value).toShortString()),
                     QString("32x3 float32"));
            QVERIFY(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
                return w.find("Loop node 'acc' is unrolled at load for its 4 iterations") !=
                       std::string::npos;
            }));
            continue;
        }
        // Its trip count comes at run time: the Loop stays, its outputs' shapes found as it
        // runs, the carried value doubling each step.
        QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
        QVERIFY(opCounts(graph.value()).count("Loop"));
        QVERIFY(graph.value().node(graph.value().outputs()[1].value.node).anyRunTimeShape());
        DeviceRegistry registry;
        const SingleDevicePlan single = singleDevicePlan(graph.value());
        auto executor = loadOnVCpu(single, registry);
        QVERIFY2(executor, executor ? "" : executor.error().message.c_str());
        std::vector<HostTensor> inputs;
        for (NodeId id : executor.value()->program().inputs) {
            HostTensor input = HostTensor::zeros(graph.value().node(id).outputs[0]);
            if (graph.value().node(id).name == "trips") {
                const std::int64_t four = 4;
                std::memcpy(input.data.data(), &four, 8);
            }
            inputs.push_back(std::move(input));
        }
        // Its scan output takes the growing value too, and ONNX stacks scan outputs of one
        // shape: the run says so, naming the Loop and both shapes.
        auto result = executor.value()->run(inputs, RunOptions{0, 1});
        QVERIFY(!result);
        QVERIFY2(result.error().message.find("Loop node 'acc', scan output 0 is 4x3 float32 in "
                                             "one iteration and 8x3 float32 in another") !=
                     std::string::npos,
                 result.error().message.c_str());
    }
}

void TestOnnxReader::dataDependentOutputsAreBoundedAndFilledAtRun() {
    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    auto graph = readOnnx(bytesOf(nonZeroModel(false)), "nonzero.onnx", &devices, true, &warnings,
                          OnnxReadOptions{});
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    // Planned at the most it can hold: every element of x non-zero.
    QCOMPARE(graph.value().type(ValueRef{*graph.value().find("nz"), 0}).shape,
             (std::vector<std::int64_t>{2, 6}));
    for (const std::string& w : warnings)
        QVERIFY2(w.find("not fixed") == std::string::npos, w.c_str());

    DeviceRegistry registry;
    const SingleDevicePlan single = singleDevicePlan(graph.value());
    auto executor = loadOnVCpu(single, registry);
    QVERIFY2(executor, executor ? "" : executor.error().message.c_str());
    const std::vector<float> x{0, 1, 0, 2, 0, 3};
    HostTensor input{TensorType{{2, 3}, DType::Float32}, TensorData(24, '\0')};
    std::memcpy(input.data.data(), x.data(), 24);
    auto result = executor.value()->run({input}, RunOptions{0, 1});
    QVERIFY2(result, result ? "" : result.error().message.c_str());
    const HostTensor& nz = result.value().outputs.at(0);
    QCOMPARE(nz.type.shape, (std::vector<std::int64_t>{2, 3})); // the three it found
    std::vector<std::int64_t> indices(6);
    std::memcpy(indices.data(), nz.data.data(), 48);
    QCOMPARE(indices, (std::vector<std::int64_t>{0, 1, 1, 1, 0, 2}));

    // An operator after it runs on the extent found: its kernel is prepared at run time for
    // the three indices, and its output is that long.
    auto consumed = readOnnx(bytesOf(nonZeroModel(true)), "nonzero.onnx", &devices, true, &warnings,
                             OnnxReadOptions{});
    QVERIFY2(consumed, consumed ? "" : consumed.error().toString().c_str());
    QVERIFY(consumed.value().node(*consumed.value().find("t")).runTimeShape(0));
    const SingleDevicePlan consumedPlan = singleDevicePlan(consumed.value());
    auto after = loadOnVCpu(consumedPlan, registry);
    QVERIFY2(after, after ? "" : after.error().message.c_str());
    auto transposed = after.value()->run({input}, RunOptions{0, 1});
    QVERIFY2(transposed, transposed ? "" : transposed.error().message.c_str());
    const HostTensor& t = transposed.value().outputs.at(0);
    QCOMPARE(t.type.shape, (std::vector<std::int64_t>{3, 2}));
    std::memcpy(indices.data(), t.data.data(), 48);
    QCOMPARE(indices, (std::vector<std::int64_t>{0, 1, 1, 0, 1, 2}));
}

namespace {

/// A sequence of float tensors, as a graph input or output type (`dims` empty: no shape).
void setSequenceType(onnx::ValueInfoProto* info, const std::string& name,
                     const std::vector<std::int64_t>& dims) {
    info->set_name(name);
    auto* tensor =
        info->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
    tensor->set_elem_type(kFloat);
    auto* shape = tensor->mutable_shape();
    for (std::int64_t d : dims)
        shape->add_dim()->set_dim_value(d);
}

/// What an exporter writes for a Python list of tensors: x [4, 3] split into its rows
/// (SplitToSequence), a row of ones inserted at position 1, a Loop over SequenceLength that
/// sums the rows (SequenceAt) and scans each doubled, the rows stacked (ConcatFromSequence with
/// a new axis), and the rows of x as a sequence output.
onnx::ModelProto listOfTensorsModel() {
    onnx::ModelProto model = emptyModel("list");
    onnx::GraphProto* g = model.mutable_graph();
    addValue(g->mutable_input(), "x", {4, 3});
    setInt(addNode(g, "SplitToSequence", {"x"}, {"rows"}), "keepdims", 0);
    onnx::TensorProto* ones = addInitializer(g, "ones", {3});
    for (int k = 0; k < 3; ++k)
        ones->add_float_data(1.0f);
    onnx::TensorProto* zeros = addInitializer(g, "zeros", {3});
    for (int k = 0; k < 3; ++k)
        zeros->add_float_data(0.0f);
    addInt64s(model, "one", {1}, true);
    addNode(g, "SequenceInsert", {"rows", "ones", "one"}, {"list"});
    addNode(g, "SequenceLength", {"list"}, {"count"});
    onnx::NodeProto* loop = addNode(g, "Loop", {"count", "", "zeros"}, {"sum", "doubled"});
    onnx::GraphProto* body = addBody(loop, "body");
    setType(body->add_input(), "i", kInt64, std::vector<std::int64_t>{});
    setType(body->add_input(), "c", kBool, std::vector<std::int64_t>{});
    setType(body->add_input(), "acc", kFloat);
    addNode(body, "Identity", {"c"}, {"c_out"});
    addNode(body, "SequenceAt", {"list", "i"}, {"row"});
    addNode(body, "Add", {"acc", "row"}, {"acc_out"});
    addNode(body, "Add", {"row", "row"}, {"twice"});
    setType(body->add_output(), "c_out", kBool);
    setType(body->add_output(), "acc_out", kFloat);
    setType(body->add_output(), "twice", kFloat);
    onnx::NodeProto* stack = addNode(g, "ConcatFromSequence", {"list"}, {"stacked"});
    setInt(stack, "axis", 0);
    setInt(stack, "new_axis", 1);
    addValue(g->mutable_output(), "sum", {3});
    addValue(g->mutable_output(), "doubled", {5, 3});
    addValue(g->mutable_output(), "stacked", {5, 3});
    setSequenceType(g->add_output(), "rows", {3});
    return model;
}

HostTensor floatTensor(const std::vector<std::int64_t>& shape, const std::vector<float>& values) {
    HostTensor tensor{TensorType{shape, DType::Float32},
                      TensorData(values.size() * sizeof(float), '\0')};
    std::memcpy(tensor.data.data(), values.data(), tensor.data.size());
    return tensor;
}

} // namespace

void TestOnnxReader::sequencesBecomeTheTensorsTheyHold() {
    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    auto graph = readOnnx(bytesOf(listOfTensorsModel()), "list.onnx", &devices, true, &warnings,
                          OnnxReadOptions{});
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    QCOMPARE(warnings, std::vector<std::string>{});
    const Graph& g = graph.value();
    // The Loop is unrolled over the list's five elements; no sequence operator is left.
    const auto counts = opCounts(g);
    for (const char* op : {"Loop", "SplitToSequence", "SequenceInsert", "SequenceAt",
                           "SequenceLength", "ConcatFromSequence"})
        QVERIFY2(!counts.count(op), op);
    std::vector<std::string> outputs;
    for (const auto& output : g.outputs())
        outputs.push_back(output.name);
    QCOMPARE(outputs, (std::vector<std::string>{"sum", "doubled", "stacked", "rows[0]", "rows[1]",
                                                "rows[2]", "rows[3]"}));
    QCOMPARE(g.type(g.outputs()[2].value).toShortString(), std::string("5x3 float32"));
    QCOMPARE(g.type(g.outputs()[3].value).toShortString(), std::string("3 float32"));

    DeviceRegistry registry;
    const SingleDevicePlan single = singleDevicePlan(g); // the executor keeps its graph
    auto executor = loadOnVCpu(single, registry);
    QVERIFY2(executor, executor ? "" : executor.error().message.c_str());
    std::vector<float> x(12);
    for (int k = 0; k < 12; ++k)
        x[static_cast<std::size_t>(k)] = static_cast<float>(k);
    auto result = executor.value()->run({floatTensor({4, 3}, x)}, RunOptions{0, 1});
    QVERIFY2(result, result ? "" : result.error().message.c_str());
    const auto& out = result.value().outputs;
    // The list: row 0, ones, rows 1 to 3.
    QCOMPARE(floatsOf(out[0]), (std::vector<float>{19, 23, 27}));
    QCOMPARE(floatsOf(out[1]),
             (std::vector<float>{0, 2, 4, 2, 2, 2, 6, 8, 10, 12, 14, 16, 18, 20, 22}));
    QCOMPARE(floatsOf(out[2]), (std::vector<float>{0, 1, 2, 1, 1, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
    for (int row = 0; row < 4; ++row)
        QCOMPARE(floatsOf(out[static_cast<std::size_t>(3 + row)]),
                 (std::vector<float>{3.0f * row, 3.0f * row + 1, 3.0f * row + 2}));
}

void TestOnnxReader::sequenceInputsAreGivenByTheirElements() {
    // y = ConcatFromSequence(SequenceErase(s)) along axis 0, for a sequence input s of rows of
    // any length, and an optional input o: OptionalHasElement says whether it was given.
    onnx::ModelProto model = emptyModel("given");
    model.mutable_opset_import(0)->set_version(15);
    onnx::GraphProto* g = model.mutable_graph();
    onnx::ValueInfoProto* s = g->add_input();
    setSequenceType(s, "s", {});
    s->mutable_type()
        ->mutable_sequence_type()
        ->mutable_elem_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->add_dim()
        ->set_dim_param("n");
    onnx::ValueInfoProto* o = g->add_input();
    o->set_name("o");
    o->mutable_type()
        ->mutable_optional_type()
        ->mutable_elem_type()
        ->mutable_tensor_type()
        ->set_elem_type(kFloat);
    o->mutable_type()
        ->mutable_optional_type()
        ->mutable_elem_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->add_dim()
        ->set_dim_value(2);
    addNode(g, "SequenceErase", {"s"}, {"front"});
    setInt(addNode(g, "ConcatFromSequence", {"front"}, {"y"}), "axis", 0);
    addNode(g, "OptionalHasElement", {"o"}, {"has"});
    onnx::ValueInfoProto* y = g->add_output();
    y->set_name("y");
    setShape(y, {"m"});
    setType(g->add_output(), "has", kBool, std::vector<std::int64_t>{});

    // The open dialog offers the first element's open dimensions (the optional's are fixed).
    const std::vector<SymbolicInput> symbolic = onnxSymbolicInputs(bytesOf(model));
    QCOMPARE(symbolic.size(), std::size_t{1});
    QCOMPARE(symbolic[0].name, std::string("s[0]"));
    QCOMPARE(symbolic[0].dims, std::vector<std::string>{"n"});

    // As --input-shape gives them: "s[0]", "s[1]", "s[2]" make a sequence of three.
    for (const bool withOptional : {false, true}) {
        OnnxReadOptions options;
        options.inputShapes = {{"s[0]", {2}}, {"s[1]", {3}}, {"s[2]", {4}}};
        if (withOptional)
            options.inputShapes["o"] = {2};
        DeviceSet devices = defaultDeviceSet();
        std::vector<std::string> warnings;
        auto graph = readOnnx(bytesOf(model), "given.onnx", &devices, true, &warnings, options);
        QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
        const Graph& loaded = graph.value();
        // The last element is erased: y joins the first two.
        QCOMPARE(loaded.type(loaded.outputs()[0].value).toShortString(), std::string("5 float32"));
        std::vector<std::string> parameters;
        for (const Node& node : loaded.nodes())
            if (node.isParameter())
                parameters.push_back(node.name);
        std::sort(parameters.begin(), parameters.end());
        QCOMPARE(parameters, withOptional ? (std::vector<std::string>{"o", "s[0]", "s[1]", "s[2]"})
                                          : (std::vector<std::string>{"s[0]", "s[1]", "s[2]"}));
        // An optional nobody gave is planned empty, and says so.
        QCOMPARE(warnings.size(), withOptional ? std::size_t{0} : std::size_t{1});
        if (!withOptional)
            QVERIFY2(warnings[0].find("optional input 'o'") != std::string::npos,
                     warnings[0].c_str());
        DeviceRegistry registry;
        const SingleDevicePlan single = singleDevicePlan(loaded);
        auto executor = loadOnVCpu(single, registry);
        QVERIFY2(executor, executor ? "" : executor.error().message.c_str());
        std::vector<HostTensor> inputs;
        for (NodeId id : executor.value()->program().inputs) {
            const std::string& name = loaded.node(id).name;
            if (name == "o") {
                inputs.push_back(floatTensor({2}, {7, 7}));
            } else {
                // Element k is k+2 long and holds k.
                const int k = name[2] - '0';
                inputs.push_back(
                    floatTensor({k + 2}, std::vector<float>(static_cast<std::size_t>(k + 2),
                                                            static_cast<float>(k))));
            }
        }
        auto result = executor.value()->run(inputs, RunOptions{0, 1});
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        QCOMPARE(floatsOf(result.value().outputs[0]), (std::vector<float>{0, 0, 1, 1, 1}));
        const auto& has = result.value().outputs[1];
        QCOMPARE(int(has.data[0]), withOptional ? 1 : 0);
    }

    // Nothing given: the sequence is planned with one element, with a warning naming the option
    // that gives more; here erasing it leaves nothing to concatenate, a load error.
    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    auto refused =
        readOnnx(bytesOf(model), "given.onnx", &devices, true, &warnings, OnnxReadOptions{});
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.find("ConcatFromSequence node 'y': the sequence is empty") !=
                 std::string::npos,
             refused.error().message.c_str());
    QVERIFY(!warnings.empty());
    QVERIFY2(warnings[0].find("sequence input 's' is planned with one element (give "
                              "--input-shape s[0]=") != std::string::npos,
             warnings[0].c_str());
}

void TestOnnxReader::sequencesTheLoadCannotFixAreRefused() {
    // A position that comes from a run-time input, one out of range, an empty optional read:
    // each is a load error naming the node and saying what would fix it.
    struct Case {
        const char* what;
        std::function<void(onnx::ModelProto&)> build;
        const char* expected;
    };
    const std::vector<Case> cases{
        {"run-time position",
         [](onnx::ModelProto& m) {
             setType(m.mutable_graph()->add_input(), "p", kInt64, std::vector<std::int64_t>{});
             addNode(m.mutable_graph(), "SequenceAt", {"rows", "p"}, {"y"});
         },
         "SequenceAt node 'y': the position 'p' must be known at load"},
        {"position out of range",
         [](onnx::ModelProto& m) {
             addInt64s(m, "p", {7}, true);
             addNode(m.mutable_graph(), "SequenceAt", {"rows", "p"}, {"y"});
         },
         "SequenceAt node 'y': position 7 is outside the sequence of 4 elements"},
        {"an empty optional read",
         [](onnx::ModelProto& m) {
             m.mutable_opset_import(0)->set_version(15);
             onnx::NodeProto* none = addNode(m.mutable_graph(), "Optional", {}, {"none"});
             onnx::AttributeProto* type = none->add_attribute();
             type->set_name("type");
             type->set_type(onnx::AttributeProto::TYPE_PROTO);
             type->mutable_tp()->mutable_tensor_type()->set_elem_type(kFloat);
             addNode(m.mutable_graph(), "OptionalGetElement", {"none"}, {"y"});
         },
         "OptionalGetElement node 'y': the optional 'none' holds no value"},
        {"a sequence read by a tensor operator",
         [](onnx::ModelProto& m) { addNode(m.mutable_graph(), "Relu", {"rows"}, {"y"}); },
         "Relu node 'y' reads 'rows', a sequence or optional"},
        {"a Loop too long to unroll",
         [](onnx::ModelProto& m) {
             // Inserts row 0 into the list on each of 5000 steps: refused before the first (the
             // fuzzer's 3.7e15 steps took seconds of growing copies before the limit).
             addInt64s(m, "steps", {5000}, true);
             addInt64s(m, "zero", {0}, true);
             onnx::NodeProto* loop =
                 addNode(m.mutable_graph(), "Loop", {"steps", "", "rows"}, {"grown"});
             onnx::GraphProto* body = addBody(loop, "body");
             setType(body->add_input(), "i", kInt64, std::vector<std::int64_t>{});
             setType(body->add_input(), "c", kBool, std::vector<std::int64_t>{});
             setSequenceType(body->add_input(), "list", {});
             addNode(body, "Identity", {"c"}, {"c_out"});
             addNode(body, "SequenceAt", {"list", "zero"}, {"first"});
             addNode(body, "SequenceInsert", {"list", "first"}, {"list_out"});
             setType(body->add_output(), "c_out", kBool);
             setSequenceType(body->add_output(), "list_out", {});
             setInt(addNode(m.mutable_graph(), "ConcatFromSequence", {"grown"}, {"y"}), "axis", 0);
         },
         "Loop node 'grown' is unrolled at load, and its trip count 5000 is more than 4096 "
         "iterations"},
    };
    for (const Case& c : cases) {
        onnx::ModelProto model = emptyModel("bad");
        addValue(model.mutable_graph()->mutable_input(), "x", {4, 3});
        setInt(addNode(model.mutable_graph(), "SplitToSequence", {"x"}, {"rows"}), "keepdims", 0);
        c.build(model);
        onnx::ValueInfoProto* y = model.mutable_graph()->add_output();
        y->set_name("y");
        setShape(y, {"m"});
        DeviceSet devices = defaultDeviceSet();
        std::vector<std::string> warnings;
        auto refused =
            readOnnx(bytesOf(model), "bad.onnx", &devices, true, &warnings, OnnxReadOptions{});
        QVERIFY2(!refused, c.what);
        QVERIFY2(refused.error().message.find(c.expected) != std::string::npos,
                 (std::string(c.what) + ": " + refused.error().message).c_str());
        QCOMPARE(refused.error().file, std::string("bad.onnx"));
    }
}

namespace {

/// y = y0 + x[0] + ... + x[n-1], scanning each partial sum, where the body slices x[i:i+1]: its
/// Slice bounds follow the iteration number. The trip count is the constant 3, or the graph
/// input "n".
onnx::ModelProto slicingLoopModel(bool tripsAsInput) {
    onnx::ModelProto model = emptyModel("slicing");
    onnx::GraphProto* g = model.mutable_graph();
    addValue(g->mutable_input(), "y0", {1});
    if (tripsAsInput)
        setType(g->add_input(), "n", kInt64, std::vector<std::int64_t>{});
    else
        addInt64s(model, "n", {3}, true);
    onnx::TensorProto* x = addInitializer(g, "x", {5});
    for (float v : {1.0f, 2.0f, 4.0f, 8.0f, 16.0f})
        x->add_float_data(v);
    addInt64s(model, "one", {1}, true);
    addInt64s(model, "zero_axis", {0});
    onnx::NodeProto* loop = addNode(g, "Loop", {"n", "", "y0"}, {"y", "partial"});
    onnx::GraphProto* body = addBody(loop, "body");
    setType(body->add_input(), "i", kInt64, std::vector<std::int64_t>{});
    setType(body->add_input(), "c", kBool, std::vector<std::int64_t>{});
    setType(body->add_input(), "y_in", kFloat, std::vector<std::int64_t>{1});
    addNode(body, "Identity", {"c"}, {"c_out"});
    addNode(body, "Add", {"i", "one"}, {"end"});
    addNode(body, "Unsqueeze", {"i", "zero_axis"}, {"start1"});
    addNode(body, "Unsqueeze", {"end", "zero_axis"}, {"end1"});
    addNode(body, "Slice", {"x", "start1", "end1"}, {"piece"});
    addNode(body, "Add", {"y_in", "piece"}, {"y_out"});
    addNode(body, "Identity", {"y_out"}, {"scan"});
    setType(body->add_output(), "c_out", kBool);
    setType(body->add_output(), "y_out", kFloat);
    setType(body->add_output(), "scan", kFloat);
    addValue(g->mutable_output(), "y", {1});
    onnx::ValueInfoProto* partial = g->add_output();
    partial->set_name("partial");
    setShape(partial, {"steps", 1});
    return model;
}

} // namespace

void TestOnnxReader::loopsWhoseShapesFollowTheIterationAreUnrolled() {
    // ONNX cannot type x[i:i+1] inside the body; with the trip count known at load the Loop is
    // unrolled, and each copy's bounds fold.
    installConstantFolding();
    const auto uninstall = qScopeGuard([] { setConstantEvaluator(nullptr); });
    for (const bool tripsAsInput : {false, true}) {
        OnnxReadOptions options;
        if (tripsAsInput) {
            HostTensor n{TensorType{{}, DType::Int64}, TensorData(8, '\0')};
            const std::int64_t three = 3;
            std::memcpy(n.data.data(), &three, 8);
            options.shapeInputValues["n"] = n;
        }
        DeviceSet devices = defaultDeviceSet();
        std::vector<std::string> warnings;
        auto graph = readOnnx(bytesOf(slicingLoopModel(tripsAsInput)), "slicing.onnx", &devices,
                              true, &warnings, options);
        QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
        const Graph& g = graph.value();
        QVERIFY2(!opCounts(g).count("Loop"), tripsAsInput ? "trips given" : "trips constant");
        std::string said = tripsAsInput ? "given:" : "constant:";
        for (const std::string& w : warnings)
            said += " " + w;
        QVERIFY2(g.type(g.outputs()[1].value).toShortString() == "3x1 float32", said.c_str());
        DeviceRegistry registry;
        const SingleDevicePlan single = singleDevicePlan(g);
        auto executor = loadOnVCpu(single, registry);
        QVERIFY2(executor, executor ? "" : executor.error().message.c_str());
        std::vector<HostTensor> inputs;
        for (NodeId id : executor.value()->program().inputs) {
            if (g.node(id).name == "y0")
                inputs.push_back(floatTensor({1}, {100}));
            else
                inputs.push_back(options.shapeInputValues.at("n"));
        }
        auto result = executor.value()->run(inputs, RunOptions{0, 1});
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        QCOMPARE(floatsOf(result.value().outputs[0]), std::vector<float>{107});
        QCOMPARE(floatsOf(result.value().outputs[1]), (std::vector<float>{101, 103, 107}));
    }
    // A trip count only known at run time: the Loop stays, and runs node by node with the
    // shapes each iteration has (vm/RunTimeBodies.h), for any trip count.
    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    auto atRun = readOnnx(bytesOf(slicingLoopModel(true)), "slicing.onnx", &devices, true,
                          &warnings, OnnxReadOptions{});
    QVERIFY2(atRun, atRun ? "" : atRun.error().toString().c_str());
    QVERIFY(opCounts(atRun.value()).count("Loop"));
    QVERIFY(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
        return w.find("runs node by node") != std::string::npos;
    }));
    DeviceRegistry registry;
    const SingleDevicePlan single = singleDevicePlan(atRun.value());
    auto executor = loadOnVCpu(single, registry);
    QVERIFY2(executor, executor ? "" : executor.error().message.c_str());
    for (const std::int64_t trips : {std::int64_t{3}, std::int64_t{5}}) {
        HostTensor n{TensorType{{}, DType::Int64}, TensorData(8, '\0')};
        std::memcpy(n.data.data(), &trips, 8);
        std::vector<HostTensor> inputs;
        for (NodeId id : executor.value()->program().inputs)
            inputs.push_back(atRun.value().node(id).name == "y0" ? floatTensor({1}, {100}) : n);
        auto result = executor.value()->run(inputs, RunOptions{0, 1});
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        const std::vector<float> partial = floatsOf(result.value().outputs[1]);
        const std::vector<float> expected = trips == 3
                                                ? std::vector<float>{101, 103, 107}
                                                : std::vector<float>{101, 103, 107, 115, 131};
        QCOMPARE(partial, expected);
        QCOMPARE(floatsOf(result.value().outputs[0]), std::vector<float>{expected.back()});
        QCOMPARE(result.value().outputs[1].type.shape, (std::vector<std::int64_t>{trips, 1}));
    }
}

void TestOnnxReader::stringTensorsRunOnTheCpu() {
    // y = Concat(["b", "a,c"], Cast(x to string), Cast(2.5 to string) folded at load); then
    // z = Cast(y to float): strings as constants, inputs, folded values and outputs, also after
    // --emit onnx writes them back.
    installConstantFolding();
    const auto uninstall = qScopeGuard([] { setConstantEvaluator(nullptr); });
    onnx::ModelProto model = emptyModel("strings");
    onnx::GraphProto* g = model.mutable_graph();
    addValue(g->mutable_input(), "x", {2});
    onnx::TensorProto* words = g->add_initializer();
    words->set_name("words");
    words->set_data_type(onnx::TensorProto::STRING);
    words->add_dims(2);
    words->add_string_data("b");
    words->add_string_data("a,c");
    onnx::TensorProto* half = addInitializer(g, "half", {1});
    half->add_float_data(2.5f);
    setInt(addNode(g, "Cast", {"x"}, {"xs"}), "to", onnx::TensorProto::STRING);
    setInt(addNode(g, "Cast", {"half"}, {"hs"}), "to", onnx::TensorProto::STRING);
    setInt(addNode(g, "Concat", {"words", "xs", "hs"}, {"y"}), "axis", 0);
    setInt(addNode(g, "Cast", {"y"}, {"z"}), "to", onnx::TensorProto::FLOAT);
    addValue(g->mutable_output(), "y", {5}, onnx::TensorProto::STRING);
    addValue(g->mutable_output(), "z", {5});

    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    auto graph =
        readOnnx(bytesOf(model), "strings.onnx", &devices, true, &warnings, OnnxReadOptions{});
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    QVERIFY(graph.value().node(*graph.value().find("hs")).isConstant()); // folded at load
    auto written = writeOnnx(graph.value(), devices, {});
    QVERIFY2(written, written ? "" : written.error().message.c_str());
    auto again =
        readOnnx(written.value(), "again.onnx", &devices, true, &warnings, OnnxReadOptions{});
    QVERIFY2(again, again ? "" : again.error().toString().c_str());
    for (const Graph* loaded : {&graph.value(), &again.value()}) {
        const Graph& gr = *loaded;
        QCOMPARE(QString::fromStdString(gr.type(gr.outputs()[0].value).toShortString()),
                 QString("5 string"));
        DeviceRegistry registry;
        const SingleDevicePlan single = singleDevicePlan(gr);
        auto executor = loadOnVCpu(single, registry);
        QVERIFY2(executor, executor ? "" : executor.error().message.c_str());
        auto result = executor.value()->run({floatTensor({2}, {0.1f, -3e20f})}, RunOptions{0, 1});
        QVERIFY2(result, result ? "" : result.error().message.c_str());
        const HostTensor& y = result.value().outputs[0];
        std::vector<std::string> texts;
        for (std::size_t k = 0; k < 5; ++k) {
            StringHandle handle = 0;
            std::memcpy(&handle, y.data.data() + k * 8, 8);
            texts.emplace_back(stringOf(handle));
        }
        QCOMPARE(texts, (std::vector<std::string>{"b", "a,c", "0.1", "-3e+20", "2.5"}));
        const std::vector<float> z = floatsOf(result.value().outputs[1]);
        QVERIFY(std::isnan(z[0]) && std::isnan(z[1])); // "b" and "a,c" are no numbers
        QCOMPARE(z[2], 0.1f);
        QCOMPARE(z[3], -3e20f);
        QCOMPARE(z[4], 2.5f);
    }
}

void TestOnnxReader::anOutputShapeThatDoesNotBroadcastIsRefused() {
    // Expand(x: 2x2, [4]) cannot be typed by ONNX; the model declares y as [n]. Its shape is
    // found when it runs, and ONNX's shape function refuses the operands then: the run fails
    // with a sentence naming the node, and the process lives on.
    onnx::ModelProto model = emptyModel("expand");
    onnx::GraphProto* g = model.mutable_graph();
    addValue(g->mutable_input(), "x", {2, 2});
    addInt64s(model, "shape", {4});
    addNode(g, "Expand", {"x", "shape"}, {"y"});
    onnx::ValueInfoProto* y = g->add_output();
    y->set_name("y");
    setShape(y, {"n"});
    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    auto graph =
        readOnnx(bytesOf(model), "expand.onnx", &devices, true, &warnings, OnnxReadOptions{});
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    DeviceRegistry registry;
    const SingleDevicePlan single = singleDevicePlan(graph.value());
    auto executor = loadOnVCpu(single, registry);
    QVERIFY2(executor, executor ? "" : executor.error().message.c_str());
    HostTensor x = HostTensor::zeros({{2, 2}, DType::Float32});
    auto ran = executor.value()->run({x}, RunOptions{0, 1});
    QVERIFY(!ran);
    QVERIFY2(ran.error().message.find("Expand node") != std::string::npos,
             ran.error().message.c_str());
}

void TestOnnxReader::anEmptyShapePrefixStillInfers() {
    // y = Reshape(x, Concat([], Shape(x))): what ONNX's LayerNormalization function writes for a
    // negative axis. ONNX 1.12's data propagation refuses the Concat of an empty constant; the
    // reader infers again without it and folds the shape itself.
    onnx::ModelProto model = emptyModel("prefix");
    onnx::GraphProto* g = model.mutable_graph();
    addValue(g->mutable_input(), "x", {2, 3});
    addInt64s(model, "none", {});
    addNode(g, "Shape", {"x"}, {"shape"});
    setInt(addNode(g, "Concat", {"none", "shape"}, {"target"}), "axis", 0);
    addNode(g, "Reshape", {"x", "target"}, {"y"});
    addValue(g->mutable_output(), "y", {2, 3});
    installConstantFolding();
    const auto uninstall = qScopeGuard([] { setConstantEvaluator(nullptr); });
    DeviceSet devices = defaultDeviceSet();
    std::vector<std::string> warnings;
    auto graph =
        readOnnx(bytesOf(model), "prefix.onnx", &devices, true, &warnings, OnnxReadOptions{});
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    const Graph& loaded = graph.value();
    QCOMPARE(QString::fromStdString(loaded.type(loaded.outputs()[0].value).toShortString()),
             QString("2x3 float32"));
    QVERIFY(loaded.node(loaded.node(*loaded.find("y")).inputs[1].node).isConstant());
}

/// A weights file cut short while runs read it in place (another program truncating it) fails
/// the run that read past its new end, naming the file, instead of killing the process with
/// SIGBUS; later runs fail the same way, and a device that would copy the weights refuses to load.
void TestOnnxReader::aWeightsFileCutShortUnderARunFailsIt() {
    QTemporaryDir dir;
    QVERIFY(writeMatMulWithExternalWeights(dir, "cut", std::vector<float>(512 * 512, 0.25f)));
    auto loaded = load(dir.filePath("cut.onnx"));
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    const Graph& graph = loaded.value().graph;
    const std::vector<HostTensor> inputs{randomTensor(TensorType{{4, 512}, DType::Float32}, 3)};
    DeviceRegistry registry;
    const SingleDevicePlan single = singleDevicePlan(graph);
    auto program = lowerToBytecode(single.graph, single.devices, single.plan);
    QVERIFY(program);
    auto executor = Executor::load(single.graph, single.devices, program.take(),
                                   {registry.get("cpu").value()}, graph.onnxOpset());
    QVERIFY2(executor, executor ? "" : executor.error().message.c_str());
    auto first = executor.value()->run(inputs, RunOptions{0, 1});
    QVERIFY2(first, first ? "" : first.error().message.c_str());
    // Cut to one page: the product reads the pages past it.
    QVERIFY(QFile::resize(dir.filePath("w.bin"), 4096));
    for (int attempt = 0; attempt < 2; ++attempt) {
        auto cut = executor.value()->run(inputs, RunOptions{0, 1});
        QVERIFY(!cut);
        QVERIFY2(cut.error().message.find("w.bin' was cut short while it was read") !=
                     std::string::npos,
                 cut.error().message.c_str());
    }
    // A virtual CPU copies the weights at load: refused now, naming the file.
    auto program2 = lowerToBytecode(single.graph, single.devices, single.plan);
    QVERIFY(program2);
    auto copying = Executor::load(single.graph, single.devices, program2.take(),
                                  {registry.freshVCpu()}, graph.onnxOpset());
    QVERIFY(!copying);
    QVERIFY2(copying.error().message.find("w.bin'") != std::string::npos,
             copying.error().message.c_str());
}

/// A model of an old opset goes through ONNX's version converter, whose import follows every name
/// without a check and crashed on a graph output nothing produces (the fuzzer found it): such
/// names are refused first, in the main graph and in bodies.
void TestOnnxReader::oldOpsetModelsWithUndefinedNamesAreRefused() {
    auto readAtOpset10 = [](onnx::ModelProto model) {
        model.mutable_opset_import(0)->set_version(10);
        DeviceSet devices = defaultDeviceSet();
        std::vector<std::string> warnings;
        return readOnnx(bytesOf(model), "old.onnx", &devices, true, &warnings, OnnxReadOptions{});
    };
    onnx::ModelProto output = reluModel();
    addValue(output.mutable_graph()->mutable_output(), "nowhere", {2, 3});
    auto refused = readAtOpset10(output);
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.find("graph output 'nowhere' is produced by no node") !=
                 std::string::npos,
             refused.error().message.c_str());
    onnx::ModelProto input = reluModel();
    addNode(input, "Relu", {"missing"}, {"z"});
    auto unread = readAtOpset10(input);
    QVERIFY(!unread);
    QVERIFY2(unread.error().message.find("reads 'missing', which no earlier node") !=
                 std::string::npos,
             unread.error().message.c_str());
    // A well-formed model of opset 10 still converts.
    auto converted = readAtOpset10(reluModel());
    QVERIFY2(converted, converted ? "" : converted.error().toString().c_str());
}

QTEST_APPLESS_MAIN(TestOnnxReader)
#include "tst_onnxreader.moc"
