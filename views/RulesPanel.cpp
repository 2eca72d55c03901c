// The Rules panel's editor of op rules and the fallback device.
#include "views/RulesPanel.h"

#include "session/PlanOptionText.h"
#include "views/PlacementDocument.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace placer::views {

RulesPanel::RulesPanel(PlacementDocument* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_rules(new QPlainTextEdit(this)),
      m_fallback(new QComboBox(this)), m_apply(new QPushButton(tr("Apply rules"), this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(
        new QLabel(tr("Op-name rules, one OP=DEVICE a line (globs, first match wins):"), this));
    m_rules->setMaximumHeight(110);
    layout->addWidget(m_rules);
    auto* form = new QFormLayout;
    form->addRow(tr("Fallback device:"), m_fallback);
    layout->addLayout(form);
    m_apply->setObjectName(QStringLiteral("applyRules"));
    layout->addWidget(m_apply);
    layout->addStretch(1);
    connect(m_apply, &QPushButton::clicked, this, &RulesPanel::apply);
    connect(m_document, &PlacementDocument::modelReset, this, [this] { refresh(); });
    connect(m_document, &PlacementDocument::devicesChanged, this, [this] { refresh(); });
    connect(m_document, &PlacementDocument::planChanged, this, [this] { refresh(true); });
    refresh();
}

void RulesPanel::refresh(bool keepTyping) {
    if (keepTyping && m_rules->hasFocus()) // never overwrite what the user is typing
        return;
    const PlanOptions& options = m_document->options();
    const DeviceSet& devices = m_document->devices();
    if (!keepTyping) {
        // A new graph or device set. An example in the graph's own op names: its two most
        // common ops on the default device (a pass over every node: not on every re-plan).
        std::map<std::string, int> ops;
        for (const Node& node : m_document->graph().nodes()) {
            if (node.role() == OpRole::Compute)
                ++ops[node.op->name];
        }
        std::vector<std::pair<int, std::string>> common;
        for (const auto& [op, count] : ops)
            common.emplace_back(-count, op);
        std::sort(common.begin(), common.end());
        QStringList example;
        for (std::size_t i = 0; i < common.size() && i < 2 && devices.defaultDevice().valid(); ++i)
            example << QString::fromStdString(common[i].second + "=" +
                                              devices[devices.defaultDevice()].name);
        m_rules->setPlaceholderText(example.join(QLatin1Char('\n')));
        m_fallback->clear();
        m_fallback->addItem(tr("(none)"), QString());
        for (const VirtualDevice& device : devices.devices())
            m_fallback->addItem(QString::fromStdString(device.name),
                                QString::fromStdString(device.name));
    }
    QStringList lines;
    for (const OpRule& rule : options.rules)
        lines << QString::fromStdString(rule.opPattern + "=" + rule.device);
    const QString text = lines.join(QLatin1Char('\n'));
    if (m_rules->toPlainText() != text)
        m_rules->setPlainText(text);
    m_fallback->setCurrentIndex(
        std::max(0, m_fallback->findData(QString::fromStdString(options.fallbackDevice))));
}

void RulesPanel::apply() {
    std::vector<OpRule> rules;
    const QStringList lines = m_rules->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (const QString& line : lines) {
        // Read as `placer --rule` reads it (split at the last '=').
        const QString trimmed = line.trimmed();
        if (trimmed.isEmpty())
            continue;
        ModelSource source;
        PlanRequest request;
        if (takePlanOption("rule", trimmed.toStdString(), &source, &request)) {
            emit invalid(tr("'%1' is not of the form OP=DEVICE").arg(trimmed));
            return;
        }
        OpRule rule = request.options.rules.back();
        rule.opPattern = QString::fromStdString(rule.opPattern).trimmed().toStdString();
        rule.device = QString::fromStdString(rule.device).trimmed().toStdString();
        if (!m_document->devices().find(rule.device)) {
            emit invalid(tr("'%1' names unknown device '%2'")
                             .arg(trimmed, QString::fromStdString(rule.device)));
            return;
        }
        rules.push_back(std::move(rule));
    }
    const std::string fallback = m_fallback->currentData().toString().toStdString();
    if (rules == m_document->options().rules && fallback == m_document->options().fallbackDevice)
        return;
    emit applyRequested(std::move(rules), fallback);
}

} // namespace placer::views
