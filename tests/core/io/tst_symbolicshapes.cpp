// Shapes in named dimensions: the arithmetic of DimExpr, the exact fit and its refusals, and
// models read with their values' shapes in the names their inputs give.
#include "OnnxModelBuilder.h"

#include "backends/cpu/ConstantEvaluation.h"
#include "io/ModelLoader.h"
#include "io/SymbolicShapes.h"
#include "ir/DimExpr.h"
#include "plan/CostModel.h"
#include "plan/Planner.h"
#include "report/PlanReport.h"
#include "vm/ReferenceRun.h"
#include "vm/RunTimeShapes.h"

#include <QTest>

#include <functional>
#include <random>

using namespace placer;
using namespace placer::test;

namespace {

std::string sourcePath(const std::string& relative) {
    return std::string(PLACER_SOURCE_DIR) + "/" + relative;
}

DimExpr sym(const char* name) {
    return DimExpr::symbol(name);
}

DimExpr num(std::int64_t value) {
    return DimExpr::constant(value);
}

/// The shape text of the value a node (named by its ONNX output) gives.
std::string shapeOf(const Graph& graph, const std::string& name) {
    const auto id = graph.find(name);
    if (!id)
        return "no node " + name;
    const SymbolicShape* shape = symbolicShapeOf(graph, ValueRef{*id, 0});
    return shape ? symbolicShapeText(*shape) : "static";
}

/// Input x[batch, seq, 8] of `g`.
void addBatchSeqInput(onnx::GraphProto* g) {
    onnx::ValueInfoProto* x = g->add_input();
    x->set_name("x");
    auto* type = x->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    type->mutable_shape()->add_dim()->set_dim_param("batch");
    type->mutable_shape()->add_dim()->set_dim_param("seq");
    type->mutable_shape()->add_dim()->set_dim_value(8);
}

/// A model of x[batch, seq, 8] whose values' sizes follow the names by sums, products and
/// powers, and (with `strided`) one, a strided slice, whose size does not follow them by any
/// polynomial.
std::string arithmeticModel(bool strided = true) {
    onnx::ModelProto model = emptyModel("arith");
    onnx::GraphProto* g = model.mutable_graph();
    addBatchSeqInput(g);
    auto ints = [&](const std::string& name, const std::vector<std::int64_t>& values) {
        onnx::TensorProto* t = addInitializer(g, name, {static_cast<std::int64_t>(values.size())});
        t->set_data_type(onnx::TensorProto_DataType_INT64);
        for (std::int64_t v : values)
            t->add_int64_data(v);
    };
    ints("pads", {0, 1, 0, 0, 2, 0});
    ints("starts", {0});
    ints("ends", {1000});
    ints("axes", {1});
    ints("steps", {2});
    ints("flat", {-1, 8});
    // seq+3 (Pad), 2*seq (Concat), seq*seq (MatMul of x by its transpose), batch*seq (Reshape),
    // ceil(seq/2) (Slice with step 2): no polynomial.
    addOp(g, "Pad", {"x", "pads"}, "padded");
    setInt(addOp(g, "Concat", {"x", "x"}, "twice"), "axis", 1);
    setInts(addOp(g, "Transpose", {"x"}, "xt"), "perm", {0, 2, 1});
    addOp(g, "MatMul", {"x", "xt"}, "scores");
    addOp(g, "Reshape", {"x", "flat"}, "rows");
    if (strided) {
        addOp(g, "Slice", {"x", "starts", "ends", "axes", "steps"}, "every_other");
    } else {
        // A class token expanded to the batch and put before the sequence, as ViT's export
        // does: Shape, Slice, Concat and Expand fold into a constant of batch×1×8 repeating it.
        onnx::TensorProto* token = addInitializer(g, "token", {1, 1, 8});
        token->set_data_type(onnx::TensorProto_DataType_FLOAT);
        for (int v = 0; v < 8; ++v)
            token->add_float_data(static_cast<float>(v) + 0.5f);
        ints("zero", {0});
        ints("one", {1});
        ints("rest", {1, 8});
        addOp(g, "Shape", {"x"}, "xshape");
        addOp(g, "Slice", {"xshape", "zero", "one"}, "xbatch");
        setInt(addOp(g, "Concat", {"xbatch", "rest"}, "tokenshape"), "axis", 0);
        addOp(g, "Expand", {"token", "tokenshape"}, "tokens");
        setInt(addOp(g, "Concat", {"tokens", "x"}, "with_token"), "axis", 1);
    }
    for (const char* out : {"padded", "twice", "scores", "rows", "every_other", "with_token"}) {
        if (std::string(out) == (strided ? "with_token" : "every_other"))
            continue;
        onnx::ValueInfoProto* info = g->add_output();
        info->set_name(out);
        auto* result = info->mutable_type()->mutable_tensor_type();
        result->set_elem_type(onnx::TensorProto_DataType_FLOAT);
        for (int axis = 0; axis < (std::string(out) == "rows" ? 2 : 3); ++axis)
            result->mutable_shape()->add_dim(); // unknown: inference gives it
    }
    return bytesOf(model);
}

} // namespace

class TestSymbolicShapes : public QObject {
    Q_OBJECT

private slots:
    // Shape subgraphs are folded at load, as every front end does (session/Session.h).
    void initTestCase() { installConstantFolding(); }
    void arithmetic();
    void spellings();
    void fitFindsEveryPolynomialOfDegreeTwo();
    void fitRefusesWhatNoPolynomialGives();
    void encoderValuesFollowBatchAndSeq();
    void sumsProductsAndPowers();
    void copiesAndTypesAreDescribedInTheNames();
    void staticModelsAndDataDependentShapesAreLeftAlone();
    void theSizesOfARunAreShownBesideThem();
    void costsAtNamedSizesAreThoseOfAPlanAtThem();
    void aModelThatCannotBeReadAtOtherSizesIsShownAsPlanned();
    void instantiatedAtSizesIsTheModelReadThere();
    void aModelBoundToItsSizesSaysWhy();
    void einsumShapesComeFromTheirEquations();
    void aFitThatHoldsOnlyAtSmallSizesIsCaught();
    void aDecoderWithACacheServesEverySizeFromOneRead();
};

void TestSymbolicShapes::arithmetic() {
    const DimExpr seq = sym("seq");
    const DimExpr batch = sym("batch");
    const auto seqPlusOne = seq.plus(num(1));
    QVERIFY(seqPlusOne);
    const auto square = seq.times(*seqPlusOne); // seq*seq + seq
    QVERIFY(square);
    QCOMPARE(square->degree(), 2);
    QCOMPARE(square->evaluate({{"seq", 7}}), std::optional<std::int64_t>(56));
    const auto half = DimExpr::fromTerms({{{"seq", "seq"}, 1}, {{"seq"}, 1}}, 2);
    QVERIFY(half);
    QCOMPARE(half->evaluate({{"seq", 3}}), std::optional<std::int64_t>(6));
    QCOMPARE(half->toString(), std::string("(seq*seq+seq)/2"));
    // Common factors cancel: (2*seq)/2 is seq.
    QCOMPARE(*DimExpr::fromTerms({{{"seq"}, 2}}, 2), seq);
    // A name without a value, and an inexact division, have no value.
    QVERIFY(!batch.times(seq)->evaluate({{"seq", 3}}));
    QVERIFY(!DimExpr::fromTerms({{{"seq"}, 1}}, 2)->evaluate({{"seq", 3}}));
    QVERIFY(!DimExpr::fromTerms({{{"seq"}, 1}}, 0));
    // Overflow is refused, not wrapped.
    const DimExpr huge = num(std::int64_t(1) << 62);
    QVERIFY(!huge.times(num(4)));
    QVERIFY(!huge.times(seq)->evaluate({{"seq", 4}}));
    QVERIFY(num(0).isConstant());
    QCOMPARE(num(5).constantValue(), std::optional<std::int64_t>(5));
    QVERIFY(!seq.constantValue());
    QCOMPARE(batch.times(seq)->symbols(), (std::set<std::string>{"batch", "seq"}));
}

void TestSymbolicShapes::spellings() {
    const DimExpr seq = sym("seq");
    const DimExpr batch = sym("batch");
    QCOMPARE(batch.times(seq)->toString(), std::string("batch*seq"));
    QCOMPARE(seq.times(num(2))->toString(), std::string("2*seq"));
    QCOMPARE(seq.plus(num(-1))->toString(), std::string("seq-1"));
    QCOMPARE(num(-3).toString(), std::string("-3"));
    const SymbolicShape shape{batch, batch.times(seq), num(64), std::nullopt};
    QCOMPARE(symbolicShapeText(shape), std::string("batch×(batch*seq)×64×?"));
    QVERIFY(!symbolicBytesText(shape, DType::Float32));
    const SymbolicShape known{batch, seq, num(256)};
    QCOMPARE(*symbolicBytesText(known, DType::Float32), std::string("batch×seq×1.00 KiB"));
    QCOMPARE(*symbolicBytesText({seq.times(num(2)).value(), num(16)}, DType::Int64),
             std::string("(2*seq)×128 B"));
    QCOMPARE(symbolicShapeText({}), std::string("scalar"));
    QVERIFY(isSymbolic(known));
    QVERIFY(!isSymbolic({num(3), num(4)}));
    QCOMPARE(evaluateShape(known, {{"batch", 2}, {"seq", 5}}),
             (std::optional<std::vector<std::int64_t>>{{2, 5, 256}}));
}

void TestSymbolicShapes::fitFindsEveryPolynomialOfDegreeTwo() {
    // Random polynomials of total degree <= 2 in one to three names, with rational
    // coefficients, are found exactly from the grid and its checks.
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> coefficient(-3, 3);
    const std::vector<std::string> names = {"a", "b", "c"};
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t count = 1 + static_cast<std::size_t>(trial % 3);
        const std::vector<std::string> symbols(names.begin(), names.begin() + count);
        std::map<DimExpr::Monomial, std::int64_t> terms;
        terms[{}] = coefficient(rng);
        for (std::size_t i = 0; i < count; ++i) {
            terms[{symbols[i]}] = coefficient(rng);
            for (std::size_t j = i; j < count; ++j)
                terms[{symbols[i], symbols[j]}] = coefficient(rng);
        }
        const std::int64_t divisor = 1 + trial % 2; // halves where the values allow them
        auto truth = DimExpr::fromTerms(terms, divisor);
        QVERIFY(truth);
        const auto points = fitPoints(count, 2, {2, 3, 5}, 2);
        std::vector<std::int64_t> values;
        bool integral = true;
        for (const auto& point : points) {
            SymbolValues at;
            for (std::size_t s = 0; s < count; ++s)
                at[symbols[s]] = point[s];
            const auto value = truth->evaluate(at);
            integral = integral && value.has_value();
            values.push_back(value.value_or(0));
        }
        if (!integral)
            continue; // not a size function: it is not integral at every point
        const auto fitted = fitDimExpr(symbols, points, values, 2);
        QVERIFY2(fitted, truth->toString().c_str());
        QCOMPARE(fitted->toString(), truth->toString());
    }
}

void TestSymbolicShapes::fitRefusesWhatNoPolynomialGives() {
    const std::vector<std::string> one = {"s"};
    const auto points = fitPoints(1, 2, {2, 3, 5}, 2);
    QCOMPARE(points.size(), std::size_t(5)); // 3 fix it, 2 check it
    auto valuesOf = [&](const std::function<std::int64_t(std::int64_t)>& f) {
        std::vector<std::int64_t> values;
        for (const auto& point : points)
            values.push_back(f(point[0]));
        return values;
    };
    // A stride's floor division, a cube, a step, and a power of two: none is of degree 2.
    QVERIFY(!fitDimExpr(one, points, valuesOf([](std::int64_t s) { return (s + 1) / 2; }), 2));
    QVERIFY(!fitDimExpr(one, points, valuesOf([](std::int64_t s) { return s * s * s; }), 2));
    QVERIFY(!fitDimExpr(one, points, valuesOf([](std::int64_t s) { return s > 4 ? 9 : 1; }), 2));
    QVERIFY(!fitDimExpr(one, points, valuesOf([](std::int64_t s) { return 1 << s; }), 2));
    // Degree 3 in two names (batch*seq*seq) is refused at degree 2.
    const auto two = fitPoints(2, 2, {2, 3, 5}, 2);
    std::vector<std::int64_t> cubic;
    for (const auto& point : two)
        cubic.push_back(point[0] * point[1] * point[1]);
    QVERIFY(!fitDimExpr({"batch", "seq"}, two, cubic, 2));
    // Too few points fix nothing; mismatched sizes are refused.
    QVERIFY(!fitDimExpr(one, {{2}, {3}}, {4, 9}, 2));
    QVERIFY(!fitDimExpr(one, points, {1, 2}, 2));
    // A constant needs no names.
    QCOMPARE(fitDimExpr(one, points, std::vector<std::int64_t>(points.size(), 7), 2),
             std::optional<DimExpr>(num(7)));
}

void TestSymbolicShapes::encoderValuesFollowBatchAndSeq() {
    auto loaded =
        loadModelFile(sourcePath("tests/models/dyn_encoder.onnx"), GraphFormat::Auto, std::nullopt);
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    const Graph& graph = loaded.value().graph;
    QCOMPARE(graph.symbolValues, (SymbolValues{{"batch", 1}, {"seq", 1}}));
    QCOMPARE(shapeOf(graph, "x"), std::string("batch×seq×16"));
    QCOMPARE(shapeOf(graph, "kt"), std::string("batch×16×seq"));
    QCOMPARE(shapeOf(graph, "s"), std::string("batch×seq×seq"));
    // The flatten exporters write through Shape, Gather and Mul, folded at load.
    QCOMPARE(shapeOf(graph, "r2"), std::string("(batch*seq)×16"));
    QCOMPARE(shapeOf(graph, "o2"), std::string("(batch*seq)×16"));
    QCOMPARE(shapeOf(graph, "y"), std::string("batch×seq×16"));
    const ValueRef flat{*graph.find("r2"), 0};
    QCOMPARE(describeValueType(graph, flat),
             std::string("(batch*seq)×16 float32 ((batch*seq)×64 B), planned at 1x16"));
    // Its planned shape is still the stand-in.
    QCOMPARE(graph.node(*graph.find("s")).outputs[0].shape, (std::vector<std::int64_t>{1, 1, 1}));

    // Read at given sizes, the names keep those values.
    auto given = loadModelFile(sourcePath("tests/models/dyn_encoder.onnx"), GraphFormat::Auto,
                               std::nullopt, {{"x", {2, 7, 16}}});
    QVERIFY(given);
    QCOMPARE(given.value().graph.symbolValues, (SymbolValues{{"batch", 2}, {"seq", 7}}));
    QCOMPARE(shapeOf(given.value().graph, "r2"), std::string("(batch*seq)×16"));
}

void TestSymbolicShapes::sumsProductsAndPowers() {
    auto loaded = loadModelText(arithmeticModel(), "arith.onnx", GraphFormat::Onnx, std::nullopt);
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    const Graph& graph = loaded.value().graph;
    QCOMPARE(shapeOf(graph, "padded"), std::string("batch×(seq+3)×8"));
    QCOMPARE(shapeOf(graph, "twice"), std::string("batch×(2*seq)×8"));
    QCOMPARE(shapeOf(graph, "scores"), std::string("batch×seq×seq"));
    QCOMPARE(shapeOf(graph, "rows"), std::string("(batch*seq)×8"));
    // ceil(seq/2) is no polynomial: unknown, not guessed.
    QCOMPARE(shapeOf(graph, "every_other"), std::string("batch×?×8"));
    const auto slice = *graph.find("every_other");
    QCOMPARE(describeValueBytes(graph, ValueRef{slice, 0}), std::string("size known at run time"));
}

void TestSymbolicShapes::copiesAndTypesAreDescribedInTheNames() {
    auto loaded = loadModelFile(sourcePath("tests/models/dyn_encoder.onnx"), GraphFormat::Auto,
                                DeviceSet::parse("a:vcpu,b:vcpu").value());
    QVERIFY(loaded);
    LoadedModel model = loaded.take();
    const ValueRef scores{*model.graph.find("s"), 0};
    QCOMPARE(describeValueType(model.graph, scores),
             std::string("batch×seq×seq float32 (batch×seq×seq×4 B), planned at 1x1x1"));
    PlanOptions options;
    options.rules.push_back({"Softmax", "b"});
    options.fallbackDevice = std::string(1, 'a');
    const Plan plan = planDevices(model.graph, model.devices, options);
    bool found = false;
    for (const CopyPlan& copy : plan.copies) {
        if (copy.value == scores) {
            found = true;
            QCOMPARE(copy.symbolicSize, std::string("batch×seq×seq×4 B"));
        }
    }
    QVERIFY(found);
    const std::string text = planSummary(model.graph, model.devices, options, plan);
    QVERIFY2(text.find("batch×seq×seq×4 B") != std::string::npos, text.c_str());
    QVERIFY2(text.find("at batch=1, seq=1") != std::string::npos, text.c_str());
}

void TestSymbolicShapes::staticModelsAndDataDependentShapesAreLeftAlone() {
    auto fixed = loadModelFile(sourcePath("tests/models/runtime_slice_pad.onnx"), GraphFormat::Auto,
                               std::nullopt);
    QVERIFY(fixed);
    QVERIFY(fixed.value().graph.symbolValues.empty());
    auto selected = loadModelFile(sourcePath("tests/models/nonzero_select.onnx"), GraphFormat::Auto,
                                  std::nullopt);
    QVERIFY(selected);
    const Graph& graph = selected.value().graph;
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.node(NodeId(i));
        for (std::size_t k = 0; k < node.symbolicShapes.size(); ++k)
            QVERIFY(!node.runTimeShape(k) || node.symbolicShapes[k].empty());
    }
}

void TestSymbolicShapes::theSizesOfARunAreShownBesideThem() {
    auto encoder =
        loadModelFile(sourcePath("tests/models/dyn_encoder.onnx"), GraphFormat::Auto, std::nullopt);
    QVERIFY(encoder);
    const Graph& graph = encoder.value().graph;
    RanSizes ran;
    ran.symbols = {{"batch", 3}, {"seq", 5}};
    QCOMPARE(describeValueType(graph, ValueRef{*graph.find("r2"), 0}, &ran),
             std::string("(batch*seq)×16 float32 ((batch*seq)×64 B), planned at 1x16; ran as "
                         "15x16 (960 B)"));
    // A static value has no other size to show.
    QCOMPARE(describeValueType(graph, ValueRef{*graph.find("wq"), 0}, &ran),
             std::string("16x16 float32 (1.00 KiB)"));
    // A length a kernel found: the run's own.
    auto selected = loadModelFile(sourcePath("tests/models/nonzero_select.onnx"), GraphFormat::Auto,
                                  std::nullopt);
    QVERIFY(selected);
    const Graph& select = selected.value().graph;
    RanSizes found;
    found.found[{"y", 0}] = {8, 3};
    QCOMPARE(describeValueType(select, ValueRef{*select.find("y"), 0}, &found),
             std::string("float32, rank 2, shape known at run time; ran as 8x3 (96 B)"));
}

void TestSymbolicShapes::costsAtNamedSizesAreThoseOfAPlanAtThem() {
    // Placed and predicted at batch=4, seq=64 from the stand-in plan, as if read at those sizes.
    const DeviceSet devices = DeviceSet::parse("a:vcpu,b:vcpu").value();
    auto atStandIns =
        loadModelFile(sourcePath("tests/models/dyn_encoder.onnx"), GraphFormat::Auto, devices);
    auto atSizes = loadModelFile(sourcePath("tests/models/dyn_encoder.onnx"), GraphFormat::Auto,
                                 devices, {{"x", {4, 64, 16}}});
    QVERIFY(atStandIns && atSizes);
    PlanOptions options;
    options.mode = PlanMode::Auto;
    options.costs = std::make_shared<const CostModel>(CostModel::assumed(devices, 2));
    const Plan real = planDevices(atSizes.value().graph, devices, options);
    const Plan standIn = planDevices(atStandIns.value().graph, devices, options);
    options.costAt = {{"batch", 4}, {"seq", 64}};
    const Plan costed = planDevices(atStandIns.value().graph, devices, options);
    QVERIFY(real.prediction && standIn.prediction && costed.prediction);
    QVERIFY(standIn.prediction->makespanMicros < real.prediction->makespanMicros);
    QCOMPARE(costed.prediction->makespanMicros, real.prediction->makespanMicros);
    QCOMPARE(costed.devices, real.devices);
    const std::string text = planSummary(atStandIns.value().graph, devices, options, costed);
    QVERIFY2(text.find("predicted latency at batch=4, seq=64") != std::string::npos, text.c_str());
    // Sizes for names the model does not have change nothing.
    options.costAt = {{"tokens", 9}};
    QCOMPARE(planDevices(atStandIns.value().graph, devices, options).prediction->makespanMicros,
             standIn.prediction->makespanMicros);
}

void TestSymbolicShapes::aModelThatCannotBeReadAtOtherSizesIsShownAsPlanned() {
    auto loaded =
        loadModelFile(sourcePath("tests/models/dyn_encoder.onnx"), GraphFormat::Auto, std::nullopt);
    QVERIFY(loaded);
    Graph graph = loaded.value().graph;
    int reads = 0;
    const SymbolicShapeSummary summary =
        annotateSymbolicShapes(graph, [&](const auto&) -> Result<Graph> {
            ++reads;
            return SourceError::sentence("no such size");
        });
    QVERIFY(reads > 0);
    QVERIFY(summary.skipped.find("no such size") != std::string::npos);
    QCOMPARE(summary.symbolicValues, 0);
    // What an earlier read found is gone with it: nothing claims a shape it cannot show.
    QCOMPARE(shapeOf(graph, "s"), std::string("static"));
    QVERIFY(graph.symbolValues.empty());
}

namespace {

/// Why `sized` is not the graph `read`, node by node (names, ops, inputs, types, pins,
/// constants' bytes), or empty.
std::string differences(const Graph& sized, const Graph& read) {
    if (sized.size() != read.size())
        return std::to_string(sized.size()) + " nodes against " + std::to_string(read.size());
    for (std::uint32_t i = 0; i < sized.size(); ++i) {
        const Node& a = sized.node(NodeId(i));
        const Node& b = read.node(NodeId(i));
        if (a.name != b.name || a.op != b.op || a.inputs != b.inputs)
            return "node " + a.name + " against " + b.name;
        for (std::size_t k = 0; k < a.outputs.size(); ++k) {
            if (a.runTimeShape(k) != b.runTimeShape(k))
                return "node " + a.name + ": found at run time in one only";
            if (!a.runTimeShape(k) && a.outputs[k] != b.outputs[k])
                return "node " + a.name + ": " + a.outputs[k].toShortString() + " against " +
                       b.outputs[k].toShortString();
        }
        if ((a.data == nullptr) != (b.data == nullptr) ||
            (a.data && a.data->bytes() != b.data->bytes()))
            return "the data of " + a.name;
    }
    if (sized.symbolValues != read.symbolValues)
        return "other sizes";
    return {};
}

using Reader = std::function<Result<LoadedModel>(const InputShapes&)>;

Reader fileReader(const std::string& path) {
    return [path](const InputShapes& shapes) {
        return loadModelFile(path, GraphFormat::Auto, std::nullopt, shapes);
    };
}

Reader textReader(std::string text) {
    return [text](const InputShapes& shapes) {
        return loadModelText(text, "model.onnx", GraphFormat::Onnx, std::nullopt, shapes);
    };
}

} // namespace

/// A graph instantiated at other sizes of its names (shapes evaluated, folded sizes such as a
/// Reshape's Shape-Gather-Mul target evaluated) is, node for node and byte for byte, the model
/// read at those sizes; a plan of it keeps its devices, and its memory plan is the one a plan
/// made there has.
void TestSymbolicShapes::instantiatedAtSizesIsTheModelReadThere() {
    struct Case {
        const char* name;
        Reader read;
        std::string input;
        std::vector<std::vector<std::int64_t>> shapes;
    };
    std::vector<Case> cases = {
        {"dyn_encoder",
         fileReader(sourcePath("tests/models/dyn_encoder.onnx")),
         "x",
         {{2, 16, 16}, {3, 33, 16}, {1, 512, 16}, {1, 1, 16}}},
        {"arith", textReader(arithmeticModel(false)), "x", {{2, 5, 8}, {4, 1, 8}, {1, 64, 8}}},
        {"symbolic seed",
         fileReader(sourcePath("tests/fuzz/seeds/onnx/symbolic-batch-seq.onnx")),
         "",
         {}},
    };
    // Local models exported by PyTorch, where the environment has them (the transformer's
    // heads are a Reshape to sizes the exporter computes from Shape).
    if (const char* dir = std::getenv("PLACER_ONNX_MODELS")) {
        cases.push_back({"transformer_encoder",
                         fileReader(std::string(dir) + "/transformer_encoder.onnx"),
                         "input",
                         {{1, 8, 256}, {2, 128, 256}, {1, 512, 256}}});
        for (const char* name : {"shufflenet_v2", "vit_b_16"})
            cases.push_back({name,
                             fileReader(std::string(dir) + "/" + name + ".onnx"),
                             "input",
                             {{2, 3, 224, 224}, {3, 3, 224, 224}}});
        // The causal decoder's mask (tokens×tokens of -inf above the diagonal) follows the
        // sizes by no expression: it stays computed, and the one read serves every size.
        auto decoder = fileReader(std::string(dir) + "/causal_decoder.onnx")({});
        if (decoder)
            QVERIFY2(decoder.value().graph.sizeBound.empty(),
                     decoder.value().graph.sizeBound.c_str());
    }
    const DeviceSet devices = DeviceSet::parse("a:vcpu,b:vcpu").take();
    int compared = 0;
    for (const Case& c : cases) {
        auto opened = c.read({});
        if (!opened && std::getenv("PLACER_ONNX_MODELS") == nullptr)
            QFAIL((std::string(c.name) + ": " + opened.error().toString()).c_str());
        if (!opened)
            continue; // not in this environment
        const Graph& graph = opened.value().graph;
        QVERIFY2(graph.sizeBound.empty(), (std::string(c.name) + ": " + graph.sizeBound).c_str());
        QVERIFY2(!graph.symbolValues.empty(), c.name);
        std::vector<std::vector<std::int64_t>> shapes = c.shapes;
        std::string input = c.input;
        if (shapes.empty()) { // every named dimension at 3, then at 7
            input = graph.openInputs.front().name;
            for (const std::int64_t size : {3, 7}) {
                std::vector<std::int64_t> shape;
                for (const std::string& dim : graph.openInputs.front().declaredDims)
                    shape.push_back(std::isdigit(static_cast<unsigned char>(dim[0])) != 0
                                        ? std::stoll(dim)
                                        : size);
                shapes.push_back(shape);
            }
        }
        PlanOptions options;
        options.rules = {{"MatMul", "b"}, {"Softmax", "b"}};
        options.fallbackDevice = "a";
        const Plan plan = planDevices(graph, devices, options);
        for (const std::vector<std::int64_t>& shape : shapes) {
            auto read = c.read({{input, shape}});
            QVERIFY2(read, read ? "" : read.error().toString().c_str());
            const Graph& there = read.value().graph;
            auto sized = instantiateAtSizes(graph, there.symbolValues);
            QVERIFY2(sized, sized ? "" : sized.error().toString().c_str());
            const std::string why = differences(sized.value(), there);
            QVERIFY2(why.empty(), (std::string(c.name) + " at " +
                                   TensorType{shape, DType::Float32}.toShortString() + ": " + why)
                                      .c_str());
            // The shape functions agree with the fit there (nothing is refused for nothing).
            const Status checked = checkTypesAtSizes(sized.value(), graph.onnxOpset());
            QVERIFY2(checked.ok(), checked.ok() ? "" : checked.error().toString().c_str());
            auto resized = planAtSizes(sized.value(), devices, options, plan);
            QVERIFY2(resized, resized ? "" : resized.error().toString().c_str());
            const Plan direct = planDevices(there, devices, options);
            QCOMPARE(resized.value().devices, direct.devices);
            QCOMPARE(resized.value().copies.size(), direct.copies.size());
            for (std::size_t k = 0; k < direct.copies.size(); ++k)
                QCOMPARE(resized.value().copies[k].bytes, direct.copies[k].bytes);
            QCOMPARE(resized.value().memory.devices.size(), direct.memory.devices.size());
            for (std::size_t d = 0; d < direct.memory.devices.size(); ++d)
                QCOMPARE(resized.value().memory.devices[d].peakBytes,
                         direct.memory.devices[d].peakBytes);
            ++compared;
        }
    }
    QVERIFY(compared >= 9);
    auto arith = textReader(arithmeticModel(false))({});
    QVERIFY(arith);
    const Node& tokens = arith.value().graph.node(*arith.value().graph.find("tokens"));
    QVERIFY(tokens.isConstant() && tokens.tiledData);
    const Node& shape = arith.value().graph.node(*arith.value().graph.find("flat"));
    QVERIFY(shape.symbolicData.empty()); // the model's own [-1, 8]: no sizes in it
    // A size must be one, and the names the model's.
    auto opened = fileReader(sourcePath("tests/models/dyn_encoder.onnx"))({});
    QVERIFY(opened);
    // The flatten's target, folded from Shape(x), Gather and Mul, in the names.
    const Node& flat = opened.value().graph.node(*opened.value().graph.find("flat"));
    QCOMPARE(flat.symbolicData.size(), std::size_t{2});
    QCOMPARE(flat.symbolicData[0].toString(), std::string("batch*seq"));
    QCOMPARE(flat.symbolicData[1].toString(), std::string("16"));
    // 0 is a size (an empty cache before a prompt); a negative one is not.
    QVERIFY(!instantiateAtSizes(opened.value().graph, {{"seq", -1}}));
    QVERIFY(instantiateAtSizes(opened.value().graph, {{"seq", 0}}));
    QVERIFY(!instantiateAtSizes(opened.value().graph, {{"tokens", 4}}));
}

/// A decoder with its cache as inputs computes its positions from Range(P, P+T) and its causal
/// mask from them: values folded from the sizes by no expression. They stay computed (the Range
/// nodes are in the graph, what they read folded), so the one read serves every size, the
/// empty cache of the prompt included.
void TestSymbolicShapes::aDecoderWithACacheServesEverySizeFromOneRead() {
    auto opened = fileReader(sourcePath("tests/models/tiny_decoder.onnx"))({});
    QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
    const Graph& graph = opened.value().graph;
    QVERIFY2(graph.sizeBound.empty(), graph.sizeBound.c_str());
    QCOMPARE(graph.symbolValues.size(), std::size_t{2});
    int ranges = 0;
    for (const Node& node : graph.nodes()) {
        if (node.op->name != "Range")
            continue;
        ++ranges;
        QVERIFY(!node.isConstant());
        // Its bounds stay folded: P and P+T, as expressions of the sizes.
        for (const ValueRef& input : node.inputs) {
            const Node& bound = graph.node(input.node);
            QVERIFY2(bound.isConstant(), bound.name.c_str());
        }
    }
    QCOMPARE(ranges, 2); // the positions' and the mask's columns
    for (const auto& [p, t] :
         std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 32}, {32, 1}, {95, 1}, {7, 5}}) {
        auto sized = instantiateAtSizes(graph, {{"P", p}, {"T", t}});
        QVERIFY2(sized, sized ? "" : sized.error().message.c_str());
        const Graph& at = sized.value();
        const auto typeOf = [&](const std::string& output) {
            for (const GraphOutput& out : at.outputs()) {
                if (out.name == output)
                    return at.node(out.value.node).outputs[out.value.output].shape;
            }
            return std::vector<std::int64_t>{};
        };
        QCOMPARE(typeOf("logits"), (std::vector<std::int64_t>{1, t, 128}));
        QCOMPARE(typeOf("present_key_1"), (std::vector<std::int64_t>{1, 2, p + t, 16}));
    }
}

/// A model whose graph at other sizes is more than its shapes evaluated says why, and is not
/// instantiated: a strided slice's ceil(seq/2) is no polynomial.
void TestSymbolicShapes::aModelBoundToItsSizesSaysWhy() {
    auto loaded = loadModelText(arithmeticModel(), "arith.onnx", GraphFormat::Onnx, std::nullopt);
    QVERIFY(loaded);
    const Graph& graph = loaded.value().graph;
    QVERIFY2(graph.sizeBound.find("every_other") != std::string::npos, graph.sizeBound.c_str());
    auto sized = instantiateAtSizes(graph, {{"seq", 9}});
    QVERIFY(!sized);
    QCOMPARE(sized.error().message, graph.sizeBound);
    // A static model has nothing to instantiate.
    auto fixed = loadModelFile(sourcePath("tests/models/nonzero_select.onnx"), GraphFormat::Auto,
                               std::nullopt);
    QVERIFY(fixed);
    QVERIFY(!instantiateAtSizes(fixed.value().graph, {}));
}

/// ONNX's inference gives Einsum's rank alone, so its shape is found when it runs, from the
/// equation: spaced as PyTorch writes it (MaxViT's attention), with broadcast axes ("..."), and
/// implicit (no "->"); each value checked against loops written here.
void TestSymbolicShapes::einsumShapesComeFromTheirEquations() {
    onnx::ModelProto model = emptyModel("einsum");
    onnx::GraphProto* g = model.mutable_graph();
    addValue(g->mutable_input(), "q", {2, 3, 4});
    addValue(g->mutable_input(), "k", {2, 5, 4});
    addValue(g->mutable_input(), "m", {5, 6});
    const auto equation = [](onnx::NodeProto* node, const std::string& text) {
        onnx::AttributeProto* attr = node->add_attribute();
        attr->set_name("equation");
        attr->set_type(onnx::AttributeProto_AttributeType_STRING);
        attr->set_s(text);
    };
    equation(addOp(g, "Einsum", {"q", "k"}, "scores"), "b i d, b j d -> b i j");
    equation(addOp(g, "Einsum", {"scores", "m"}, "mixed"), "...ij,jk");
    for (const char* out : {"scores", "mixed"}) {
        onnx::ValueInfoProto* info = g->add_output();
        info->set_name(out);
        auto* type = info->mutable_type()->mutable_tensor_type();
        type->set_elem_type(onnx::TensorProto_DataType_FLOAT);
        for (int axis = 0; axis < 3; ++axis)
            type->mutable_shape()->add_dim(); // unknown: inference gives the rank alone
    }
    auto loaded = loadModelText(bytesOf(model), "einsum.onnx", GraphFormat::Onnx, std::nullopt);
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    std::vector<HostTensor> inputs;
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> unit(-1, 1);
    for (const std::vector<std::int64_t>& shape :
         std::vector<std::vector<std::int64_t>>{{2, 3, 4}, {2, 5, 4}, {5, 6}}) {
        HostTensor t = HostTensor::zeros({shape, DType::Float32});
        auto* v = reinterpret_cast<float*>(t.data.data());
        for (std::int64_t e = 0; e < t.type.elementCount(); ++e)
            v[e] = unit(rng);
        inputs.push_back(std::move(t));
    }
    auto outputs = runReference(loaded.value().graph, inputs, 13);
    QVERIFY2(outputs, outputs ? "" : outputs.error().toString().c_str());
    QCOMPARE(outputs.value()[0].type.shape, (std::vector<std::int64_t>{2, 3, 5}));
    QCOMPARE(outputs.value()[1].type.shape, (std::vector<std::int64_t>{2, 3, 6}));
    const auto* q = reinterpret_cast<const float*>(inputs[0].data.data());
    const auto* k = reinterpret_cast<const float*>(inputs[1].data.data());
    const auto* m = reinterpret_cast<const float*>(inputs[2].data.data());
    const auto* scores = reinterpret_cast<const float*>(outputs.value()[0].data.data());
    const auto* mixed = reinterpret_cast<const float*>(outputs.value()[1].data.data());
    for (int b = 0; b < 2; ++b) {
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 5; ++j) {
                float sum = 0;
                for (int d = 0; d < 4; ++d)
                    sum += q[(b * 3 + i) * 4 + d] * k[(b * 5 + j) * 4 + d];
                QVERIFY(std::fabs(scores[(b * 3 + i) * 5 + j] - sum) < 1e-5f);
            }
            for (int c = 0; c < 6; ++c) {
                float sum = 0;
                for (int j = 0; j < 5; ++j)
                    sum += scores[(b * 3 + i) * 5 + j] * m[j * 6 + c];
                QVERIFY(std::fabs(mixed[(b * 3 + i) * 6 + c] - sum) < 1e-5f);
            }
        }
    }
}

namespace {

/// x[batch, seq, 8]: its first rows, either the first 16 (a Slice with constant bounds) or the
/// first min(seq, 16) computed from Shape(x) (folded at load into the Slice's end).
std::string clampModel(bool computed) {
    onnx::ModelProto model = emptyModel("clamp");
    onnx::GraphProto* g = model.mutable_graph();
    addBatchSeqInput(g);
    for (const auto& [name, value] : std::vector<std::pair<std::string, std::int64_t>>{
             {"starts", 0}, {"ends", 16}, {"axes", 1}, {"two", 2}}) {
        onnx::TensorProto* t = addInitializer(g, name, {1});
        t->set_data_type(onnx::TensorProto_DataType_INT64);
        t->add_int64_data(value);
    }
    if (computed) {
        addOp(g, "Shape", {"x"}, "xshape");
        addOp(g, "Slice", {"xshape", "axes", "two"}, "length");
        addOp(g, "Min", {"length", "ends"}, "end");
        addOp(g, "Slice", {"x", "starts", "end", "axes"}, "head");
    } else {
        addOp(g, "Slice", {"x", "starts", "ends", "axes"}, "head");
    }
    addOp(g, "Relu", {"head"}, "y");
    onnx::ValueInfoProto* y = g->add_output();
    y->set_name("y");
    auto* out = y->mutable_type()->mutable_tensor_type();
    out->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (int axis = 0; axis < 3; ++axis)
        out->mutable_shape()->add_dim();
    return bytesOf(model);
}

} // namespace

/// A clamp follows the sizes it was read at and not beyond: the first 16 rows of x are seq rows
/// at every size the fit reads (up to 8), so the fit says seq. The model read once more far
/// away (seq = 257) binds the graph to its sizes, whether the clamp is the Slice's own bounds or
/// folded into its end from Shape(x) (which no node's shape function could tell); and where a
/// fit is wrong at the sizes of a run all the same, the ops' shape functions find the node.
void TestSymbolicShapes::aFitThatHoldsOnlyAtSmallSizesIsCaught() {
    for (const bool computed : {false, true}) {
        auto loaded =
            loadModelText(clampModel(computed), "clamp.onnx", GraphFormat::Onnx, std::nullopt);
        QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
        const Graph& graph = loaded.value().graph;
        QCOMPARE(shapeOf(graph, "y"), std::string("batch×seq×8")); // so the small reads say
        QVERIFY2(graph.sizeBound.find("read otherwise at batch=251, seq=257") != std::string::npos,
                 graph.sizeBound.c_str());
        QVERIFY(!instantiateAtSizes(graph, {{"seq", 40}}));
        if (computed)
            continue;
        // Unbound by hand: the shape functions catch the Slice at 40, not at 4.
        Graph unbound = graph;
        unbound.sizeBound.clear();
        auto small = instantiateAtSizes(unbound, {{"batch", 2}, {"seq", 4}});
        QVERIFY(small);
        QVERIFY(checkTypesAtSizes(small.value(), graph.onnxOpset()).ok());
        auto large = instantiateAtSizes(unbound, {{"batch", 2}, {"seq", 40}});
        QVERIFY(large);
        const Status checked = checkTypesAtSizes(large.value(), graph.onnxOpset());
        QVERIFY(!checked.ok());
        QVERIFY2(checked.error().message.find("'head' gives 2x16x8") != std::string::npos,
                 checked.error().message.c_str());
    }
}

QTEST_GUILESS_MAIN(TestSymbolicShapes)
#include "tst_symbolicshapes.moc"
