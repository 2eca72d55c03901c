// A one-line hint above a view, dismissed for good with its close button: how to use what the
// user is looking at, said once, then out of the way.
#pragma once

#include <QFrame>
#include <QString>

class QLabel;
class QToolButton;

namespace placer::views {

class HintBar : public QFrame {
    Q_OBJECT

public:
    /// Hidden from the start when the hint under `settingsKey` was dismissed before (QSettings).
    HintBar(QString settingsKey, const QString& text, QWidget* parent = nullptr);

    QToolButton* closeButton() const { return m_close; }
    bool dismissed() const { return m_dismissed; }

signals:
    void dismissedNow();

private:
    void dismiss();

    QString m_key;
    QLabel* m_text;
    QToolButton* m_close;
    bool m_dismissed = false;
};

} // namespace placer::views
