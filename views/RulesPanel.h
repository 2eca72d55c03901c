// The Rules panel: op-name rules (one OP=DEVICE a line, globs, first match wins) and the
// fallback device. It shows the document's rules and asks for new ones; whoever owns the undo
// stack turns the request into an edit.
#pragma once

#include "session/Session.h"

#include <QWidget>

#include <string>
#include <vector>

class QComboBox;
class QPlainTextEdit;
class QPushButton;

namespace placer::views {

class PlacementDocument;

class RulesPanel : public QWidget {
    Q_OBJECT

public:
    explicit RulesPanel(PlacementDocument* document, QWidget* parent = nullptr);

    QPlainTextEdit* editor() const { return m_rules; }
    QComboBox* fallbackBox() const { return m_fallback; }
    QPushButton* applyButton() const { return m_apply; }

public slots:
    /// Shows the document's rules and fallback (and an example in the graph's own op names);
    /// `keepTyping` leaves the text alone while the user is editing it.
    void refresh(bool keepTyping = false);
    /// Reads the text and the fallback: applyRequested when they parse and differ from the
    /// document's, invalid otherwise.
    void apply();

signals:
    void applyRequested(std::vector<OpRule> rules, std::string fallback);
    /// A line that is no OP=DEVICE rule or names an unknown device, in a sentence.
    void invalid(const QString& message);

private:
    PlacementDocument* m_document;
    QPlainTextEdit* m_rules;
    QComboBox* m_fallback;
    QPushButton* m_apply;
};

} // namespace placer::views
