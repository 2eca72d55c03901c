// The Relay text reader: the supported subset, and clear located errors for everything else.
#include "io/RelayReader.h"
#include "ir/Scalar.h"

#include <QTest>

#include <cmath>

using namespace placer;

namespace {

DeviceSet twoDevices() {
    return DeviceSet::parse("cpu:cpu,gpu:cuda").take();
}

Result<Graph> read(const QString& text) {
    static const DeviceSet devices = twoDevices();
    return readRelay(text.toStdString(), devices, "m.relay");
}

const char* kSharedInput = R"(#[version = "0.0.5"]
def @main(%a: Tensor[(5, 7), float32], %b: Tensor[(5, 7), float32], %c: Tensor[(5, 7), float32]) {
  %0 = add(%a, %b);
  %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);
  %2 = add(%b, %c);
  %3 = on_device(%2, virtual_device=meta[VirtualDevice][1]);
  subtract(%1, %3)
}
)";

} // namespace

class TestRelayReader : public QObject {
    Q_OBJECT

private slots:
    void sharedInputProgram();
    void integerLiteralsPastTheirTypeSaturate();
    void onDeviceBecomesAPinNotANode();
    void olderSpellings();
    void parameterAndResultDevices();
    void letTuplesProjectionsAndConstants();
    void typedDimensions();
    void commentsAndMetaConstants();
    void errors_data();
    void errors();
    void truncatedInputNeverCrashes();
};

void TestRelayReader::sharedInputProgram() {
    auto graph = read(kSharedInput);
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    const Graph& g = graph.value();
    QCOMPARE(g.size(), std::size_t(6));
    QStringList names;
    for (const Node& node : g.nodes())
        names << QString::fromStdString(node.name + ":" + node.op->name);
    QCOMPARE(names.join(' '), QString("%a:parameter %b:parameter %c:parameter %0:add %2:add "
                                      "subtract:subtract"));
    QCOMPARE(g.outputs().size(), std::size_t(1));
    QCOMPARE(g.node(*g.find("%1")).name, std::string("%0"));
    QCOMPARE(g.node(*g.find("%3")).aliases, std::vector<std::string>{"%3"});
    QCOMPARE(g.type(g.outputs()[0].value).toRelay(), std::string("Tensor[(5, 7), float32]"));
}

void TestRelayReader::onDeviceBecomesAPinNotANode() {
    auto graph = read(kSharedInput);
    const Node& first = graph.value().node(*graph.value().find("%0"));
    QCOMPARE(first.pin.kind, PinKind::Plain);
    QCOMPARE(first.pin.device, DeviceId(0));
    QCOMPARE(first.pin.origin, std::string("on_device at m.relay:4:8"));
    const Node& second = graph.value().node(*graph.value().find("%2"));
    QCOMPARE(second.pin.device, DeviceId(1));

    auto fixed = read("def @main(%x: Tensor[(2), float32]) {"
                      " %0 = on_device(negative(%x), virtual_device=meta[VirtualDevice][1],"
                      " constrain_result=True); %0 }");
    QVERIFY2(fixed, fixed ? "" : fixed.error().toString().c_str());
    QCOMPARE(fixed.value().node(*fixed.value().find("%0")).pin.kind, PinKind::Fixed);
}

void TestRelayReader::olderSpellings() {
    auto graph =
        read("def @main(%a: Tensor[(5, 7), float32], %b: Tensor[(5, 7), float32],"
             " param_se_scopes=[meta[SEScope][0], meta[SEScope][1]],"
             " result_se_scope=meta[SEScope][1]) {"
             "  %0 = add(%a, %a);"
             "  %1 = on_device(%0, se_scope=meta[SEScope][0], is_fixed=True);"
             "  %2 = device_copy(%1, src_se_scope=meta[SEScope][0], dst_se_scope=meta[SEScope][1]);"
             "  subtract(%2, %b) }");
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    const Graph& g = graph.value();
    QCOMPARE(g.node(*g.find("%a")).pin.kind, PinKind::Fixed);
    QCOMPARE(g.node(*g.find("%b")).pin.device, DeviceId(1));
    QCOMPARE(g.node(*g.find("%0")).pin.kind, PinKind::Fixed);
    const Node& copy = g.node(*g.find("%2"));
    QVERIFY(copy.isDeviceCopy());
    QCOMPARE(copy.copySource, DeviceId(0));
    QCOMPARE(copy.copyDestination, DeviceId(1));
    QCOMPARE(g.outputs()[0].device, DeviceId(1));
}

void TestRelayReader::parameterAndResultDevices() {
    auto graph = read("def @main(%x {virtual_device=meta[VirtualDevice][0]}: Tensor[(3), float32],"
                      " %y {virtual_device=\"gpu\"}: Tensor[(3), float32],"
                      " virtual_device=meta[VirtualDevice][1]) -> Tensor[(3), float32] {"
                      " add(%x, %y) }");
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    const Graph& g = graph.value();
    QCOMPARE(g.node(*g.find("%x")).pin.device, DeviceId(0));
    QCOMPARE(g.node(*g.find("%x")).pin.kind, PinKind::Fixed);
    QCOMPARE(g.node(*g.find("%y")).pin.device, DeviceId(1));
    QCOMPARE(g.outputs()[0].device, DeviceId(1));
}

void TestRelayReader::letTuplesProjectionsAndConstants() {
    auto graph = read("def @main(%x: Tensor[(4, 8), float32]) {"
                      "  let %s = split(%x, indices_or_sections=[2, 6], axis=1);"
                      "  let %t = (%s.0, %s.2);"
                      "  %0 = concatenate(%t, axis=1);"
                      "  %1 = multiply(%0, 2f);"
                      "  %2 = add(%1, 1.5f);"
                      "  %3 = cast(%2, dtype=\"int64\");"
                      "  %4 = add(%3, 7i64);"
                      "  (%4, %s.1) }");
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    const Graph& g = graph.value();
    const Node& split = g.node(*g.find("%s"));
    QCOMPARE(split.outputs.size(), std::size_t(3));
    QCOMPARE(split.outputs[1].shape, (std::vector<std::int64_t>{4, 4}));
    const Node& concat = g.node(*g.find("%0"));
    QCOMPARE(concat.inputs.size(), std::size_t(2));
    QVERIFY(concat.inputs[1] == (ValueRef{*g.find("%s"), 2}));
    QCOMPARE(concat.outputs[0].shape, (std::vector<std::int64_t>{4, 4}));
    QCOMPARE(g.node(*g.find("2f")).outputs[0].dtype, DType::Float32);
    QCOMPARE(g.node(*g.find("7i64")).outputs[0].dtype, DType::Int64);
    QCOMPARE(g.outputs().size(), std::size_t(2));
    QCOMPARE(g.outputs()[1].value.output, 1u);
}

void TestRelayReader::typedDimensions() {
    auto graph = read("def @main(%x: Tensor[(2i64, 3i64), float32]) { %x }");
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    QCOMPARE(graph.value().nodes()[0].outputs[0].shape, (std::vector<std::int64_t>{2, 3}));
}

void TestRelayReader::commentsAndMetaConstants() {
    auto graph =
        read("#[version = \"0.0.5\"]\n"
             "/* a /* nested */ comment */\n"
             "def @main(%x: Tensor[(1, 3, 8, 8), float32]) { // trailing\n"
             "  %0 = nn.conv2d(%x, meta[relay.Constant][0] /* ty=Tensor[(4, 3, 3, 3), float32] */,"
             " padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]) /* ty=Tensor[(1, 4, 8, 8), "
             "float32] */;\n"
             "  nn.bias_add(%0, meta[relay.Constant][1] /* ty=Tensor[(4), float32] */)\n"
             "}\n"
             "#[metadata]\n{ \"root\": 1, anything here is ignored }\n");
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    const Graph& g = graph.value();
    QCOMPARE(g.size(), std::size_t(5));
    QVERIFY(g.nodes()[1].isConstant());
    QCOMPARE(g.nodes()[1].outputs[0].shape, (std::vector<std::int64_t>{4, 3, 3, 3}));
}

void TestRelayReader::errors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");

    QTest::newRow("unknown-op") << "def @main(%x: Tensor[(2), float32]) {\n  ad(%x, %x)\n}"
                                << "unknown operator 'ad'" << 2 << 3;
    QTest::newRow("undefined-variable") << "def @main(%x: Tensor[(2), float32]) {\n  add(%x, %y)\n}"
                                        << "use of undefined variable %y" << 2 << 11;
    QTest::newRow("wrong-arity") << "def @main(%x: Tensor[(2), float32]) { add(%x) }"
                                 << "add takes 2 arguments, got 1" << 1 << 39;
    QTest::newRow("shape-mismatch")
        << "def @main(%x: Tensor[(2), float32], %y: Tensor[(3), float32]) {\n add(%x, %y) }"
        << "add: shapes (2) and (3) do not broadcast" << 2 << 2;
    QTest::newRow("device-index-out-of-range")
        << "def @main(%x: Tensor[(2), float32]) {\n  on_device(%x, "
           "virtual_device=meta[VirtualDevice][2])\n}"
        << "meta[VirtualDevice][2] is out of range: the devices are 0 = cpu, 1 = gpu" << 2 << 32;
    QTest::newRow("unknown-dtype") << "def @main(%x: Tensor[(2), float31]) { %x }"
                                   << "unknown dtype 'float31'" << 1 << 27;
    QTest::newRow("missing-semicolon")
        << "def @main(%x: Tensor[(2), float32]) {\n  %0 = negative(%x)\n  %0\n}"
        << "expected ';' after the binding of %0, found '%0'" << 3 << 3;
    QTest::newRow("unterminated-comment") << "/* never closed\ndef @main() { 1f }"
                                          << "unterminated /* comment" << 1 << 1;
    QTest::newRow("bad-version") << "#[version = \"0.0.4\"]\ndef @main() { 1f }"
                                 << "unsupported Relay text version" << 1 << 13;
    QTest::newRow("projection-out-of-range")
        << "def @main(%x: Tensor[(4), float32]) { %0 = split(%x, indices_or_sections=2); %0.2 }"
        << "tuple has 2 fields; .2 is out of range" << 1 << 81;
    QTest::newRow("projection-of-tensor")
        << "def @main(%x: Tensor[(4), float32]) { %x.0 }"
        << "projection .0 of a value that is not a tuple" << 1 << 41;
    QTest::newRow("other-function") << "def @main() { 1f }\ndef @other() { 2f }"
                                    << "only one function, @main, is supported" << 2 << 1;
    QTest::newRow("declared-type-mismatch")
        << "def @main(%x: Tensor[(4), float32]) { let %y: Tensor[(5), float32] = negative(%x); %y }"
        << "%y is declared as Tensor[(5), float32] but its value has type Tensor[(4), float32]" << 1
        << 70;
    QTest::newRow("on-device-without-device")
        << "def @main(%x: Tensor[(2), float32]) { on_device(%x) }"
        << "on_device needs virtual_device" << 1 << 39;
    QTest::newRow("copy-without-dst")
        << "def @main(%x: Tensor[(2), float32]) { device_copy(%x, "
           "src_virtual_device=meta[VirtualDevice][0]) }"
        << "device_copy needs src_virtual_device and dst_virtual_device" << 1 << 39;
    QTest::newRow("meta-constant-without-type")
        << "def @main(%x: Tensor[(2), float32]) { add(%x, meta[relay.Constant][0]) }"
        << "has no type: write /* ty=Tensor[(...), dtype] */ after it" << 1 << 47;
    QTest::newRow("absurd-dimension")
        << "def @main(%x: Tensor[(99999999999, 99999999999, 99999999), float32]) { %x }"
        << "is too large" << 1 << 15;
    QTest::newRow("dynamic-dimension") << "def @main(%x: Tensor[(?, 3), float32]) { %x }"
                                       << "dynamic dimensions (?) are not supported" << 1 << 23;
    QTest::newRow("stray-character") << "def @main(%x: Tensor[(2), float32]) { $ }"
                                     << "unexpected character '$'" << 1 << 39;
    QTest::newRow("unterminated-string")
        << "def @main(%x: Tensor[(2), float32]) { cast(%x, dtype=\"float32) }"
        << "unterminated string" << 1 << 54;
    QTest::newRow("empty-input") << ""
                                 << "expected 'def @main(...)', found end of input" << 1 << 1;
    QTest::newRow("deep-nesting") << QString("def @main(%x: Tensor[(2), float32]) { ") +
                                         QString("negative(").repeated(600) + "%x" +
                                         QString(")").repeated(600) + " }"
                                  << "nested more than 200 levels deep" << 1 << 1848;
}

void TestRelayReader::errors() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    QFETCH(int, line);
    QFETCH(int, column);
    auto graph = read(text);
    QVERIFY2(!graph, "expected an error");
    const SourceError& error = graph.error();
    QVERIFY2(QString::fromStdString(error.message).contains(message), error.toString().c_str());
    QCOMPARE(error.file, std::string("m.relay"));
    QCOMPARE(error.line, line);
    QCOMPARE(error.column, column);
    QVERIFY(QString::fromStdString(error.toString())
                .startsWith(QString("m.relay:%1:%2: ").arg(line).arg(column)));
}

void TestRelayReader::truncatedInputNeverCrashes() {
    const QByteArray full(kSharedInput);
    for (int length = 0; length < full.size(); ++length) {
        auto graph = read(QString::fromUtf8(full.left(length)));
        if (!graph) {
            QVERIFY2(graph.error().line > 0, graph.error().toString().c_str());
            QVERIFY(!graph.error().message.empty());
        }
    }
}

// A literal past its integer type's range is held at the range's end, not cast (undefined
// behaviour the fuzzer found through encodeScalar); NaN becomes 0, booleans are 0 or 1.
void TestRelayReader::integerLiteralsPastTheirTypeSaturate() {
    auto graph = read(QStringLiteral("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), int32]) "
                                     "{ add(%x, 1555980000000000000i32) }"));
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    bool found = false;
    for (const Node& node : graph.value().nodes()) {
        if (!node.isConstant() || !node.data)
            continue;
        const auto value = decodeScalar(DType::Int32, std::string_view(node.data->data(), 4));
        QVERIFY(value);
        QCOMPARE(*value, 2147483647.0);
        found = true;
    }
    QVERIFY(found);
    QCOMPARE(*decodeScalar(DType::Int8, encodeScalar(DType::Int8, -1e300)), -128.0);
    QCOMPARE(*decodeScalar(DType::UInt16, encodeScalar(DType::UInt16, -5.0)), 0.0);
    QCOMPARE(*decodeScalar(DType::Int64, encodeScalar(DType::Int64, 1e19)), 9223372036854775807.0);
    QCOMPARE(*decodeScalar(DType::UInt64, encodeScalar(DType::UInt64, std::nan(""))), 0.0);
    QCOMPARE(*decodeScalar(DType::Int32, encodeScalar(DType::Int32, -7.9)), -7.0);
    QCOMPARE(*decodeScalar(DType::Bool, encodeScalar(DType::Bool, 0.25)), 1.0);
    QCOMPARE(*decodeScalar(DType::Bool, encodeScalar(DType::Bool, 0.0)), 0.0);
}

QTEST_APPLESS_MAIN(TestRelayReader)
#include "tst_relayreader.moc"
