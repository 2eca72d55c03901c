// The JSON document model: parsing with positions, stable writing, and bad input.
#include "io/Json.h"

#include <QTest>

using namespace placer;

class TestJson : public QObject {
    Q_OBJECT

private slots:
    void roundTrip();
    void numbersKeepTheirKind();
    void errors_data();
    void errors();
};

void TestJson::roundTrip() {
    const std::string text =
        "{\"a\": [1, 2.5, \"x\\\"y\\u00e9\"], \"b\": {\"c\": null, \"d\": true}}";
    auto parsed = Json::parse(text, "t.json");
    QVERIFY(parsed);
    const Json& doc = parsed.value();
    QCOMPARE(doc.find("a")->items()[2].asString(), std::string("x\"y\xc3\xa9"));
    QCOMPARE(doc.find("b")->find("d")->asBool(), true);
    QCOMPARE(doc.find("b")->line(), 1);
    auto again = Json::parse(doc.dump(), "t.json");
    QVERIFY(again);
    QCOMPARE(again.value().dump(), doc.dump());
    QCOMPARE(
        doc.dump(-1),
        std::string("{\"a\": [1, 2.5, \"x\\\"y\xc3\xa9\"], \"b\": {\"c\": null, \"d\": true}}"));
}

void TestJson::numbersKeepTheirKind() {
    Json doc = Json::object();
    doc.set("int", std::int64_t{9007199254740993});
    doc.set("float", 1.0);
    auto parsed = Json::parse(doc.dump(), "n.json");
    QVERIFY(parsed.value().find("int")->isInteger());
    QCOMPARE(parsed.value().find("int")->asInt(), std::int64_t{9007199254740993});
    QVERIFY(!parsed.value().find("float")->isInteger());
}

void TestJson::errors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::newRow("trailing-comma") << "{\"a\": 1,}"
                                    << "expected a member name" << 1 << 9;
    QTest::newRow("unterminated-string") << "[\n  \"abc"
                                         << "unterminated string" << 2 << 3;
    QTest::newRow("duplicate-key") << "{\"a\": 1, \"a\": 2}"
                                   << "member \"a\" appears twice" << 1 << 10;
    QTest::newRow("garbage-after") << "{} x"
                                   << "unexpected text after" << 1 << 4;
    QTest::newRow("bad-escape") << "[\"\\q\"]"
                                << "invalid escape" << 1 << 5;
    QTest::newRow("empty") << ""
                           << "unexpected end of input" << 1 << 1;
    QTest::newRow("deep") << QString("[").repeated(300) << "nested more than 256 levels" << 1
                          << 258;
}

void TestJson::errors() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    QFETCH(int, line);
    QFETCH(int, column);
    auto parsed = Json::parse(text.toStdString(), "bad.json");
    QVERIFY(!parsed);
    QVERIFY2(QString::fromStdString(parsed.error().message).contains(message),
             parsed.error().toString().c_str());
    QCOMPARE(parsed.error().line, line);
    QCOMPARE(parsed.error().column, column);
}

QTEST_APPLESS_MAIN(TestJson)
#include "tst_json.moc"
