// The side panels on their own, driven like a user drives them: the Rules panel's text and
// fallback become one request (or a sentence on what is wrong), the Conflicts and notes panel
// follows the plan and takes clicks, the Properties panel explains the selection.
#include "views/ConflictsPanel.h"
#include "views/PlacementDocument.h"
#include "views/PropertiesPanel.h"
#include "views/RulesPanel.h"

#include <QComboBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

using namespace placer;

namespace {

const char* const kBlock = R"(#[version = "0.0.5"]
def @main(%a: Tensor[(1, 1, 4, 4), float32], %w: Tensor[(1, 1, 1, 1), float32]) {
  %0 = nn.conv2d(%a, %w);
  %1 = nn.relu(%0);
  negative(%1)
}
)";

const char* const kIntConv = R"(#[version = "0.0.5"]
def @main(%a: Tensor[(1, 1, 4, 4), int32], %w: Tensor[(1, 1, 1, 1), int32]) {
  %0 = nn.conv2d(%a, %w);
  negative(%0)
}
)";

void open(views::PlacementDocument& document, const char* text) {
    QString error;
    QVERIFY2(document.openText(text, QStringLiteral("test.relay"), &error), qPrintable(error));
}

NodeId named(const views::PlacementDocument& document, const char* name) {
    const auto id = document.graph().find(name);
    if (!id)
        qFatal("no node %s", name);
    return *id;
}

} // namespace

class TestPanels : public QObject {
    Q_OBJECT

private slots:
    void rulesPanelShowsTheDocumentsRules() {
        views::PlacementDocument document;
        open(document, kBlock);
        views::RulesPanel panel(&document);
        // The example uses the graph's own ops.
        QVERIFY2(panel.editor()->placeholderText().contains("=gpu"),
                 qPrintable(panel.editor()->placeholderText()));
        document.setRules({{"nn.relu", "cpu"}}, "cpu");
        QCOMPARE(panel.editor()->toPlainText(), QStringLiteral("nn.relu=cpu"));
        QCOMPARE(panel.fallbackBox()->currentText(), QStringLiteral("cpu"));
        QCOMPARE(panel.fallbackBox()->count(), 3); // (none), cpu, gpu
    }

    void rulesPanelAsksForWhatWasTyped_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("fallback");
        QTest::addColumn<QString>("requested"); // "OP=DEV;..." or "" for no request
        QTest::addColumn<QString>("invalid");
        QTest::newRow("one-rule") << "nn.conv2d=gpu"
                                  << "cpu"
                                  << "nn.conv2d=gpu"
                                  << "";
        QTest::newRow("spaces-and-blank-lines") << "  nn.conv*  =  gpu \n\n nn.relu=cpu"
                                                << ""
                                                << "nn.conv*=gpu;nn.relu=cpu"
                                                << "";
        QTest::newRow("not-an-assignment") << "nn.conv2d"
                                           << ""
                                           << ""
                                           << "'nn.conv2d' is not of the form OP=DEVICE";
        QTest::newRow("unknown-device") << "nn.conv2d=tpu"
                                        << ""
                                        << ""
                                        << "'nn.conv2d=tpu' names unknown device 'tpu'";
        QTest::newRow("unchanged") << ""
                                   << ""
                                   << ""
                                   << "";
    }
    void rulesPanelAsksForWhatWasTyped() {
        QFETCH(QString, text);
        QFETCH(QString, fallback);
        QFETCH(QString, requested);
        QFETCH(QString, invalid);
        views::PlacementDocument document;
        open(document, kBlock);
        views::RulesPanel panel(&document);
        QSignalSpy asked(&panel, &views::RulesPanel::applyRequested);
        QSignalSpy refused(&panel, &views::RulesPanel::invalid);
        panel.editor()->setPlainText(text);
        panel.fallbackBox()->setCurrentIndex(panel.fallbackBox()->findData(fallback));
        QTest::mouseClick(panel.applyButton(), Qt::LeftButton);
        QCOMPARE(refused.size(), invalid.isEmpty() ? 0 : 1);
        if (!invalid.isEmpty())
            QCOMPARE(refused.front().front().toString(), invalid);
        QCOMPARE(asked.size(), requested.isEmpty() ? 0 : 1);
        if (requested.isEmpty())
            return;
        const auto rules = asked.front().at(0).value<std::vector<OpRule>>();
        QStringList got;
        for (const OpRule& rule : rules)
            got << QString::fromStdString(rule.opPattern + "=" + rule.device);
        QCOMPARE(got.join(';'), requested);
        QCOMPARE(QString::fromStdString(asked.front().at(1).value<std::string>()), fallback);
    }

    void conflictsPanelFollowsThePlanAndTakesClicks() {
        views::PlacementDocument document;
        open(document, kIntConv);
        views::ConflictsPanel panel(&document);
        panel.resize(400, 300);
        panel.show();
        QCOMPARE(panel.item(0)->text(), QStringLiteral("No conflicts."));
        QVERIFY(panel.item(1)->text().startsWith("Note: %0 is used on cpu and gpu"));
        const NodeId conv = named(document, "%0");
        document.setPins({conv}, {Pin{PinKind::Plain, *document.devices().find("gpu"), "test"}});
        QVERIFY(!document.plan().conflicts.empty());
        QVERIFY2(panel.item(0)->text().contains("int32"), qPrintable(panel.item(0)->text()));
        QVERIFY(panel.item(0)->text().contains("\n→ ")); // the suggestion
        QSignalSpy activated(&panel, &views::ConflictsPanel::nodeActivated);
        QTest::mouseClick(panel.viewport(), Qt::LeftButton, {},
                          panel.visualItemRect(panel.item(0)).center());
        QCOMPARE(activated.size(), 1);
        QCOMPARE(activated.front().front().value<NodeId>(), conv);
    }

    void propertiesPanelExplainsTheSelection() {
        views::PlacementDocument document;
        open(document, kBlock);
        document.setRules({{"nn.relu", "cpu"}}, "");
        views::PropertiesPanel panel(&document);
        QVERIFY(panel.toPlainText().contains("Select a node"));
        panel.showNodes({named(document, "%1")});
        const QString text = panel.toPlainText();
        QVERIFY2(text.contains("%1 nn.relu"), qPrintable(text));
        QVERIFY2(text.contains("Device: cpu"), qPrintable(text));
        QVERIFY2(text.contains("Why: " + document.explain(named(document, "%1"))),
                 qPrintable(text));
        QVERIFY2(text.contains("1x1x4x4 float32"), qPrintable(text));
        panel.showNodes({named(document, "%0"), named(document, "%1")});
        QVERIFY2(panel.toPlainText().contains("selected"), qPrintable(panel.toPlainText()));
    }
};

QTEST_MAIN(TestPanels)
#include "tst_panels.moc"
