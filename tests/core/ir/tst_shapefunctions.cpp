// Shape functions of the built-in ops: output types for good inputs, a sentence for bad ones.
#include "ir/OpRegistry.h"

#include <QTest>

using namespace placer;

namespace {

TensorType parseType(const QString& text) {
    // "1x3x224x224 float32" or "scalar int64"
    const QStringList parts = text.split(' ');
    TensorType type;
    if (parts[0] != "scalar") {
        for (const QString& d : parts[0].split('x'))
            type.shape.push_back(d.toLongLong());
    }
    type.dtype = *parseDType(parts.value(1, "float32").toStdString());
    return type;
}

} // namespace

class TestShapeFunctions : public QObject {
    Q_OBJECT

private slots:
    void shapes_data();
    void shapes();
    void registryKnowsTheIssueOps();
    void hostOnlyAndCapabilities();
};

void TestShapeFunctions::shapes_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<QStringList>("inputs");
    QTest::addColumn<QString>("attrs");    // name=int or name=i,j,k
    QTest::addColumn<QString>("expected"); // outputs joined by '; ', or "error: <substring>"

    QTest::newRow("add-broadcast") << "add" << QStringList{"5x1x7 float32", "3x1 float32"} << ""
                                   << "5x3x7 float32";
    QTest::newRow("add-incompatible") << "add" << QStringList{"5x7 float32", "3x7 float32"} << ""
                                      << "error: shapes (5, 7) and (3, 7) do not broadcast";
    QTest::newRow("add-dtype-mismatch") << "add" << QStringList{"5 float32", "5 int32"} << ""
                                        << "error: different dtypes";
    QTest::newRow("equal-is-bool") << "equal" << QStringList{"4 int64", "4 int64"} << ""
                                   << "4 bool";
    QTest::newRow("conv2d-resnet-stem")
        << "nn.conv2d" << QStringList{"1x3x224x224 float32", "64x3x7x7 float32"}
        << "strides=2,2 padding=3,3,3,3"
        << "1x64x112x112 float32";
    QTest::newRow("conv2d-grouped")
        << "nn.conv2d" << QStringList{"1x32x56x56 float32", "32x1x3x3 float32"}
        << "padding=1,1 groups=32"
        << "1x32x56x56 float32";
    QTest::newRow("conv2d-channel-mismatch")
        << "nn.conv2d" << QStringList{"1x4x8x8 float32", "8x3x3x3 float32"} << ""
        << "error: data has 4 channels but the weight";
    QTest::newRow("conv2d-nhwc-refused")
        << "nn.conv2d" << QStringList{"1x8x8x3 float32", "8x3x3x3 float32"} << "data_layout=NHWC"
        << "error: data_layout 'NHWC' is not supported";
    QTest::newRow("max-pool-ceil") << "nn.max_pool2d" << QStringList{"1x64x112x112 float32"}
                                   << "pool_size=3,3 strides=2,2 padding=1,1"
                                   << "1x64x56x56 float32";
    QTest::newRow("global-avg-pool")
        << "nn.global_avg_pool2d" << QStringList{"2x512x7x7 float32"} << ""
        << "2x512x1x1 float32";
    QTest::newRow("dense") << "nn.dense" << QStringList{"8x512 float32", "1000x512 float32"} << ""
                           << "8x1000 float32";
    QTest::newRow("dense-mismatch")
        << "nn.dense" << QStringList{"8x500 float32", "1000x512 float32"} << ""
        << "error: inner dimensions 500 and 512";
    QTest::newRow("matmul-batched")
        << "nn.matmul" << QStringList{"4x16x64 float32", "64x32 float32"} << ""
        << "4x16x32 float32";
    QTest::newRow("batch-matmul") << "nn.batch_matmul"
                                  << QStringList{"12x128x64 float32", "12x128x64 float32"} << ""
                                  << "12x128x128 float32";
    QTest::newRow("batch-norm-three-outputs")
        << "nn.batch_norm"
        << QStringList{"1x16x8x8 float32", "16 float32", "16 float32", "16 float32", "16 float32"}
        << ""
        << "1x16x8x8 float32; 16 float32; 16 float32";
    QTest::newRow("layer-norm") << "nn.layer_norm"
                                << QStringList{"2x128x768 float32", "768 float32", "768 float32"}
                                << ""
                                << "2x128x768 float32";
    QTest::newRow("softmax-bad-axis") << "nn.softmax" << QStringList{"2x3 float32"} << "axis=5"
                                      << "error: axis is out of range";
    QTest::newRow("concatenate") << "concatenate" << QStringList{"2x3 float32", "2x5 float32"}
                                 << "axis=1"
                                 << "2x8 float32";
    QTest::newRow("reshape-infer") << "reshape" << QStringList{"2x3x4 float32"} << "newshape=0,-1"
                                   << "2x12 float32";
    QTest::newRow("reshape-wrong-count")
        << "reshape" << QStringList{"2x3x4 float32"} << "newshape=5,5"
        << "error: has 24 elements";
    QTest::newRow("transpose-default") << "transpose" << QStringList{"2x3x4 float32"} << ""
                                       << "4x3x2 float32";
    QTest::newRow("transpose-axes") << "transpose" << QStringList{"2x3x4 float32"} << "axes=0,2,1"
                                    << "2x4x3 float32";
    QTest::newRow("split-sections")
        << "split" << QStringList{"4x8 float32"} << "indices_or_sections=2 axis=1"
        << "4x4 float32; 4x4 float32";
    QTest::newRow("split-indices")
        << "split" << QStringList{"10 float32"} << "indices_or_sections=2,7"
        << "2 float32; 5 float32; 3 float32";
    QTest::newRow("strided-slice")
        << "strided_slice" << QStringList{"4x10 float32"} << "begin=1,2 end=3,10 strides=1,3"
        << "2x3 float32";
    QTest::newRow("shape-of") << "shape_of" << QStringList{"1x3x8x8 float32"} << ""
                              << "4 int64";
    QTest::newRow("mean-keepdims") << "mean" << QStringList{"2x3x4 float32"} << "axis=1 keepdims=1"
                                   << "2x1x4 float32";
    QTest::newRow("sum-exclude") << "sum" << QStringList{"2x3x4 float32"} << "axis=1 exclude=1"
                                 << "3 float32";
    // As in Relay, an empty axis list reduces every axis, and exclude then changes nothing; the
    // kernels read it the same way.
    QTest::newRow("sum-empty-axis-list")
        << "sum" << QStringList{"2x3x4 float32"} << "axis=[] keepdims=1 exclude=1"
        << "1x1x1 float32";
    QTest::newRow("take-axis") << "take" << QStringList{"30522x768 float32", "1x128 int64"}
                               << "axis=0"
                               << "1x128x768 float32";
    QTest::newRow("expand-dims") << "expand_dims" << QStringList{"3 float32"} << "axis=0"
                                 << "1x3 float32";
}

void TestShapeFunctions::shapes() {
    QFETCH(QString, op);
    QFETCH(QStringList, inputs);
    QFETCH(QString, attrs);
    QFETCH(QString, expected);
    const OpDef* def = OpRegistry::global().find(op.toStdString());
    QVERIFY(def);
    std::vector<TensorType> types;
    for (const QString& input : inputs)
        types.push_back(parseType(input));
    Attrs attributes;
    for (const QString& attr : attrs.split(' ', Qt::SkipEmptyParts)) {
        const QString name = attr.section('=', 0, 0);
        const QString value = attr.section('=', 1);
        if (name.endsWith("layout")) {
            attributes.set(name.toStdString(), value.toStdString());
        } else if (value == "[]") {
            attributes.set(name.toStdString(), std::vector<std::int64_t>{});
        } else if (value.contains(',') || name == "padding" || name == "newshape" ||
                   name == "axes" || name == "begin" || name == "end" || name == "strides") {
            std::vector<std::int64_t> list;
            for (const QString& v : value.split(','))
                list.push_back(v.toLongLong());
            attributes.set(name.toStdString(), list);
        } else {
            attributes.set(name.toStdString(), std::int64_t{value.toLongLong()});
        }
    }
    const ShapeResult result = def->inferShape(types, attributes);
    if (expected.startsWith("error: ")) {
        QVERIFY2(result.failed(), "expected a shape error");
        QVERIFY2(QString::fromStdString(result.error).contains(expected.mid(7)),
                 result.error.c_str());
        return;
    }
    QVERIFY2(!result.failed(), result.error.c_str());
    QStringList outputs;
    for (const TensorType& t : result.outputs)
        outputs << QString::fromStdString(
            t.shape.empty() ? "scalar " + std::string(dtypeName(t.dtype)) : t.toShortString());
    QCOMPARE(outputs.join("; "), expected);
}

void TestShapeFunctions::registryKnowsTheIssueOps() {
    for (const char* name : {"add",
                             "subtract",
                             "multiply",
                             "divide",
                             "negative",
                             "exp",
                             "sqrt",
                             "tanh",
                             "sigmoid",
                             "nn.relu",
                             "nn.conv2d",
                             "nn.dense",
                             "nn.matmul",
                             "nn.bias_add",
                             "nn.max_pool2d",
                             "nn.avg_pool2d",
                             "nn.global_avg_pool2d",
                             "nn.batch_norm",
                             "nn.softmax",
                             "concatenate",
                             "reshape",
                             "transpose",
                             "split",
                             "strided_slice",
                             "shape_of",
                             "nn.layer_norm",
                             "nn.batch_matmul",
                             "take",
                             "mean",
                             "cast"})
        QVERIFY2(OpRegistry::global().find(name), name);
    QVERIFY(!OpRegistry::global().find("no.such.op"));
}

void TestShapeFunctions::hostOnlyAndCapabilities() {
    const OpDef* shapeOf = OpRegistry::global().find("shape_of");
    QVERIFY(shapeOf->hostOnly);
    QVERIFY(!shapeOf->hasKernel(DeviceKind::Cuda));
    const OpDef* conv = OpRegistry::global().find("nn.conv2d");
    // cuDNN convolves float32; the CPU convolves every type (oneDNN for float32, plain otherwise).
    QVERIFY(conv->hasKernel(DeviceKind::Cuda, DType::Float32));
    QVERIFY(!conv->hasKernel(DeviceKind::Cuda, DType::Float16));
    QVERIFY(!conv->hasKernel(DeviceKind::Cuda, DType::Int32));
    QVERIFY(conv->hasKernel(DeviceKind::VCpu, DType::Int32));
    QVERIFY(conv->hasKernel(DeviceKind::Cpu, DType::Float16));
    // ONNX's names share the Relay ops' families, and so their capability.
    const OpDef* onnxConv = OpRegistry::global().find("Conv");
    QVERIFY(onnxConv->kernel == conv->kernel);
    QCOMPARE(OpRegistry::global().find("Exp")->kernel,
             OpRegistry::global().find("fast_exp")->kernel);
}

QTEST_APPLESS_MAIN(TestShapeFunctions)
#include "tst_shapefunctions.moc"
