// .npy reading and writing: every element type round-trips; bad files give clear errors.
#include "io/Npy.h"
#include "ir/StringPool.h"
#include "kernels/RandomTensor.h"

#include <QtTest>

#include <cstring>

using namespace placer;

namespace {

/// A .npy file (format 1.0) as numpy.save writes it: the header dict padded to 128 bytes.
std::string npyFile(const std::string& dict, const std::string& data) {
    std::string header = dict;
    header.append(128 - 10 - header.size() - 1, ' ');
    header += '\n';
    std::string file = std::string("\x93NUMPY\x01\x00", 8);
    file += static_cast<char>(header.size());
    file += '\0';
    file += header;
    return file + data;
}

} // namespace

class TestNpy : public QObject {
    Q_OBJECT

private slots:
    void roundTrip_data() {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QString>("shape");
        for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::Int8, DType::Int16,
                        DType::Int32, DType::Int64, DType::UInt8, DType::Bool}) {
            QTest::newRow(qPrintable(QString(dtypeName(t).data()) + " 2x3")) << int(t) << "2,3";
            QTest::newRow(qPrintable(QString(dtypeName(t).data()) + " scalar")) << int(t) << "";
            QTest::newRow(qPrintable(QString(dtypeName(t).data()) + " 5")) << int(t) << "5";
        }
        QTest::newRow("empty 0x4") << int(DType::Float32) << "0,4";
    }
    void roundTrip() {
        QFETCH(int, dtype);
        QFETCH(QString, shape);
        TensorType type;
        type.dtype = static_cast<DType>(dtype);
        for (const QString& dim : shape.split(',', Qt::SkipEmptyParts))
            type.shape.push_back(dim.toLongLong());
        HostTensor tensor = randomTensor(type, 3);
        auto bytes = formatNpy(tensor);
        QVERIFY(bytes.ok());
        QCOMPARE(bytes.value().size() % 64, std::size_t(tensor.data.size() % 64));
        auto back = parseNpy(bytes.value(), "t.npy");
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
        QCOMPARE(back.value().type, tensor.type);
        QVERIFY(back.value().data == tensor.data);
        // The header as NumPy writes it: a 1-tuple keeps its comma.
        if (type.shape.size() == 1)
            QVERIFY(bytes.value().find("'shape': (5,)") != std::string::npos);
    }

    void readsNumPyFiles() {
        // What numpy.save writes for np.arange(3, dtype='<i4') (format 1.0).
        const std::int32_t values[] = {0, 1, 2};
        const std::string file =
            npyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
                    std::string(reinterpret_cast<const char*>(values), sizeof values));
        auto tensor = parseNpy(file, "arange.npy");
        QVERIFY2(tensor.ok(), tensor.ok() ? "" : tensor.error().message.c_str());
        QCOMPARE(tensor.value().type.toShortString(), std::string("3 int32"));
        std::int32_t second;
        std::memcpy(&second, tensor.value().data.data() + 4, 4);
        QCOMPARE(second, 1);
        // The committed PyTorch reference files read back.
        auto reference =
            readNpy(std::string(PLACER_SOURCE_DIR) + "/resources/models/tiny_resnet.expected.npy");
        QVERIFY(reference.ok());
        QCOMPARE(reference.value().type.toShortString(), std::string("1x10 float32"));
    }

    void stringsAreNumPyUnicode() {
        // Strings are written as numpy writes str arrays ('<U n', UTF-32), and read back, with
        // bytes arrays ('|S n') too.
        const std::vector<std::string> words{"", "Straße", "a,b", "\xF0\x9F\x99\x82"};
        HostTensor tensor{TensorType{{2, 2}, DType::String}, TensorData(32, '\0')};
        for (std::size_t k = 0; k < words.size(); ++k) {
            const StringHandle handle = internString(words[k]);
            std::memcpy(tensor.data.data() + k * 8, &handle, 8);
        }
        auto bytes = formatNpy(tensor);
        QVERIFY(bytes.ok());
        QVERIFY(bytes.value().find("'descr': '<U6'") != std::string::npos);
        auto back = parseNpy(bytes.value(), "s.npy");
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
        QCOMPARE(back.value().type.toShortString(), std::string("2x2 string"));
        QVERIFY(back.value().data == tensor.data); // the same interned strings

        std::string file = npyFile("{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }",
                                   std::string("ab\0xyz", 6));
        auto ascii = parseNpy(file, "b.npy");
        QVERIFY2(ascii.ok(), ascii.ok() ? "" : ascii.error().message.c_str());
        StringHandle first = 0, second = 0;
        std::memcpy(&first, ascii.value().data.data(), 8);
        std::memcpy(&second, ascii.value().data.data() + 8, 8);
        QCOMPARE(std::string(stringOf(first)), std::string("ab"));
        QCOMPARE(std::string(stringOf(second)), std::string("xyz"));
        // A size that does not match is an error, not a read past the end.
        file.pop_back();
        QVERIFY(!parseNpy(file, "short.npy").ok());
        // So is a shape that claims more strings than the file holds, before any allocation.
        auto huge = parseNpy(npyFile("{'descr': '|S3', 'fortran_order': False, 'shape': "
                                     "(1000000000000,), }",
                                     std::string("ab\0xyz", 6)),
                             "huge.npy");
        QVERIFY(!huge.ok());
        QVERIFY2(huge.error().message.find("not 1000000000000 strings of 3 bytes") !=
                     std::string::npos,
                 huge.error().message.c_str());
    }

    /// Strings of up to 7 bytes are their own handles and take no memory: a million distinct
    /// ones leave the pool as it was. Longer ones are kept once each, up to the pool's limit;
    /// past it, reading more is an error with its file, not an abort.
    void stringsAreBounded() {
        const StringPoolSize before = stringPoolSize();
        for (int i = 0; i < 1000000; i += 997) {
            const std::string text = std::to_string(i);
            QCOMPARE(stringOf(internString(text)), text);
        }
        for (const std::string& text : {std::string("a"), std::string("1234567"),
                                        std::string("a\0b", 3), std::string("\xff\x80")})
            QCOMPARE(stringOf(internString(text)), text);
        QCOMPARE(internString(""), StringHandle{0});
        QCOMPARE(internString("abc"), internString(std::string("abc")));
        QVERIFY(internString("abc") != internString("abd"));
        QCOMPARE(stringPoolSize().strings, before.strings);
        QCOMPARE(stringPoolSize().bytes, before.bytes);

        // Eight bytes and more are pooled, each distinct string once.
        const std::string eight = "12345678";
        QCOMPARE(stringOf(internString(eight)), eight);
        QCOMPARE(internString(eight), internString(eight));
        QCOMPARE(stringPoolSize().bytes, before.bytes + 8);

        // A full pool: interning throws, reading a file of new long strings is an error.
        setStringPoolLimit(stringPoolSize().bytes + 40);
        int kept = 0;
        bool full = false;
        for (int i = 0; i < 10 && !full; ++i) {
            try {
                internString("a long string " + std::to_string(i));
                ++kept;
            } catch (const StringPoolFull&) {
                full = true;
            }
        }
        QVERIFY(full);
        QCOMPARE(kept, 2);                              // 16 bytes each
        QCOMPARE(stringOf(internString(eight)), eight); // kept strings stay
        QCOMPARE(stringOf(internString("short")), std::string("short"));
        auto refused = parseNpy(
            npyFile("{'descr': '|S12', 'fortran_order': False, 'shape': (1,), }", "twelve bytes"),
            "long.npy");
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().toString().find("long.npy") != std::string::npos &&
                     refused.error().toString().find("distinct strings") != std::string::npos,
                 refused.error().toString().c_str());
        setStringPoolLimit(kMaxPooledStringBytes);
        QCOMPARE(stringOf(internString("twelve bytes")), std::string("twelve bytes"));
    }

    void badFiles_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("message");
        auto npy = [](const std::string& header, const std::string& data) {
            std::string out = std::string("\x93NUMPY\x01\x00", 8);
            out += static_cast<char>(header.size() & 0xff);
            out += static_cast<char>(header.size() >> 8);
            return QByteArray::fromStdString(out + header + data);
        };
        const std::string four(4, '\0');
        QTest::newRow("not npy") << QByteArray("hello world, not an array") << "not a .npy file";
        QTest::newRow("empty") << QByteArray() << "not a .npy file";
        QTest::newRow("truncated header")
            << npy("{'descr': '<f4'", "").left(14) << "ends inside the .npy header";
        QTest::newRow("fortran order")
            << npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }\n", four)
            << "Fortran-order";
        QTest::newRow("unsupported type")
            << npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n",
                   std::string(8, '\0'))
            << "element type '<c8' is not supported";
        QTest::newRow("big endian")
            << npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n", four)
            << "element type '>f4'";
        QTest::newRow("short data")
            << npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", four)
            << "the data is 4 bytes but shape 2 float32 needs 8";
        QTest::newRow("negative dim")
            << npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n", four)
            << "non-negative integers";
        QTest::newRow("missing key") << npy("{'descr': '<f4', 'shape': (1,), }\n", four)
                                     << "lacks descr, fortran_order or shape";
        QTest::newRow("garbage header") << npy("[1, 2, 3]\n", four) << "byte 10 of the .npy header";
        QTest::newRow("version 9") << QByteArray("\x93NUMPY\x09\x00\x10\x00", 10) << "version 9";
    }
    void badFiles() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, message);
        auto result = parseNpy(bytes.toStdString(), "input.npy");
        QVERIFY(!result.ok());
        const QString text = QString::fromStdString(result.error().toString());
        QVERIFY2(text.startsWith("input.npy: "), qPrintable(text));
        QVERIFY2(text.contains(message), qPrintable(text));
    }

    void missingFile() {
        auto result = readNpy("/nonexistent/x.npy");
        QVERIFY(!result.ok());
        QVERIFY(QString::fromStdString(result.error().toString()).contains("/nonexistent/x.npy"));
        QVERIFY(!writeNpy("/nonexistent/dir/y.npy", randomTensor({{2}, DType::Float32}, 1)).ok());
        QVERIFY(!formatNpy(randomTensor({{2}, DType::BFloat16}, 1)).ok());
    }
};

QTEST_APPLESS_MAIN(TestNpy)
#include "tst_npy.moc"
