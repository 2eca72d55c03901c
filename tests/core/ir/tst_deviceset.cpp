// Device sets from --devices specifications, byte sizes, and glob matching.
#include "ir/DeviceSet.h"
#include "plan/Glob.h"

#include <QTest>

using namespace placer;

class TestDeviceSet : public QObject {
    Q_OBJECT

private slots:
    void parseGood();
    void parseBad_data();
    void parseBad();
    void byteSizes_data();
    void byteSizes();
    void globs_data();
    void globs();
    void namePatterns();
};

void TestDeviceSet::parseGood() {
    const auto parsed = DeviceSet::parse("cpu:cpu,gpu0:cuda:mem=8GiB,gpu1:cuda:ordinal=3,v:vcpu");
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message.c_str());
    const DeviceSet* set = &parsed.value();
    QCOMPARE(set->size(), 4);
    QCOMPARE(set->hostDevice(), DeviceId(0));
    QCOMPARE(set->defaultDevice(), DeviceId(1));
    QCOMPARE((*set)[DeviceId(1)].memoryCapacity.value(), std::int64_t(8) << 30);
    QCOMPARE((*set)[DeviceId(1)].ordinal, 0);
    QCOMPARE((*set)[DeviceId(2)].ordinal, 3);
    QCOMPARE((*set)[DeviceId(3)].kind, DeviceKind::VCpu);
    QCOMPARE(set->namesList(), std::string("cpu, gpu0, gpu1, v"));

    const auto only = DeviceSet::parse("gpu:cuda");
    QVERIFY(only.ok());
    QVERIFY(!only.value().hostDevice().valid());
    QCOMPARE(only.value().defaultDevice(), DeviceId(0));
}

void TestDeviceSet::parseBad_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("message");
    QTest::newRow("no-kind") << "cpu"
                             << "not of the form NAME:KIND";
    QTest::newRow("unknown-kind") << "x:tpu"
                                  << "unknown kind 'tpu'";
    QTest::newRow("duplicate") << "a:cpu,a:cuda"
                               << "listed twice";
    QTest::newRow("bad-size") << "g:cuda:mem=lots"
                              << "memory size 'lots'";
    QTest::newRow("bad-option") << "g:cuda:speed=9"
                                << "unknown option 'speed'";
    QTest::newRow("bad-name") << "g pu:cuda"
                              << "is not valid";
    QTest::newRow("empty") << ""
                           << "not of the form";
}

void TestDeviceSet::parseBad() {
    QFETCH(QString, spec);
    QFETCH(QString, message);
    const auto parsed = DeviceSet::parse(spec.toStdString());
    QVERIFY(!parsed.ok());
    const std::string& error = parsed.error().message;
    QVERIFY2(QString::fromStdString(error).contains(message), error.c_str());
}

void TestDeviceSet::byteSizes_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("bytes");
    QTest::newRow("plain") << "1024" << qint64(1024);
    QTest::newRow("kib") << "4KiB" << qint64(4096);
    QTest::newRow("mb") << "3MB" << qint64(3000000);
    QTest::newRow("fraction") << "1.5GiB" << qint64(1610612736);
    QTest::newRow("bad-unit") << "3XB" << qint64(-1);
    QTest::newRow("huge") << "99999999TiB" << qint64(-1);
}

void TestDeviceSet::byteSizes() {
    QFETCH(QString, text);
    QFETCH(qint64, bytes);
    const auto parsed = parseByteSize(text.toStdString());
    QCOMPARE(parsed ? qint64(*parsed) : qint64(-1), bytes);
}

void TestDeviceSet::globs_data() {
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("matches");
    QTest::newRow("exact") << "nn.conv2d"
                           << "nn.conv2d" << true;
    QTest::newRow("star") << "nn.conv*"
                          << "nn.conv2d" << true;
    QTest::newRow("star-middle") << "nn.*pool*"
                                 << "nn.global_avg_pool2d" << true;
    QTest::newRow("star-no") << "nn.conv*"
                             << "add" << false;
    QTest::newRow("question") << "%?"
                              << "%a" << true;
    QTest::newRow("class") << "%[ab]"
                           << "%b" << true;
    QTest::newRow("class-range-no") << "%[a-c]"
                                    << "%d" << false;
    QTest::newRow("negated") << "%[!a]"
                             << "%b" << true;
    QTest::newRow("unclosed-bracket-literal") << "a[b"
                                              << "a[b" << true;
    QTest::newRow("many-stars") << "*a*a*a*a*b"
                                << "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" << false;
}

void TestDeviceSet::globs() {
    QFETCH(QString, pattern);
    QFETCH(QString, text);
    QFETCH(bool, matches);
    QCOMPARE(globMatch(pattern.toStdString(), text.toStdString()), matches);
}

/// Node patterns: a name, a glob (whole name), or re: and a regular expression found anywhere
/// in the name, as llama.cpp's -ot; a bad expression is an error that quotes it.
void TestDeviceSet::namePatterns() {
    const auto matches = [](const std::string& pattern, const std::string& name) {
        auto parsed = NamePattern::parse(pattern);
        if (!parsed)
            qFatal("%s", parsed.error().message.c_str());
        return parsed.value().matches(name);
    };
    QVERIFY(matches("/blocks.1/attn/q/MatMul", "/blocks.1/attn/q/MatMul"));
    QVERIFY(!matches("/blocks.1/attn", "/blocks.1/attn/q/MatMul"));
    QVERIFY(matches("/blocks.1/*", "/blocks.1/attn/q/MatMul"));
    QVERIFY(matches("re:blocks\\.1[2-9]\\.", "model.blocks.14.mlp.experts.weight"));
    QVERIFY(!matches("re:blocks\\.1[2-9]\\.", "model.blocks.1.mlp.experts.weight"));
    QVERIFY(matches("re:exps", "blk.3.ffn_up_exps.weight"));
    QVERIFY(matches("re:^/blocks\\.(0|1)/", "/blocks.0/up/MatMul"));
    QVERIFY(!NamePattern::parse("/blocks.1/attn").value().wildcard());
    QVERIFY(NamePattern::parse("re:attn").value().wildcard());
    auto bad = NamePattern::parse("re:blocks.(1");
    QVERIFY(!bad);
    QVERIFY2(bad.error().message.find("'re:blocks.(1' is not a regular expression") !=
                 std::string::npos,
             bad.error().message.c_str());
    QVERIFY(!NamePattern::parse("re:"));
}

QTEST_APPLESS_MAIN(TestDeviceSet)
#include "tst_deviceset.moc"
