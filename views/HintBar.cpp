// A dismissable one-line hint above a view.
#include "views/HintBar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSettings>
#include <QStyle>
#include <QToolButton>

namespace placer::views {

HintBar::HintBar(QString settingsKey, const QString& text, QWidget* parent)
    : QFrame(parent), m_key(std::move(settingsKey)), m_text(new QLabel(text, this)),
      m_close(new QToolButton(this)) {
    setObjectName(QStringLiteral("hintBar"));
    setFrameShape(QFrame::StyledPanel);
    setStyleSheet(QStringLiteral("#hintBar { background: #fff8d6; border: 1px solid #e0cf80; }"));
    m_text->setWordWrap(true);
    m_text->setTextFormat(Qt::RichText);
    m_close->setObjectName(QStringLiteral("dismissHint"));
    m_close->setAutoRaise(true);
    m_close->setIcon(style()->standardIcon(QStyle::SP_TitleBarCloseButton));
    m_close->setToolTip(tr("Hide this hint"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 4, 4, 4);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_close, 0, Qt::AlignTop);
    connect(m_close, &QToolButton::clicked, this, &HintBar::dismiss);
    m_dismissed = QSettings().value(m_key, false).toBool();
    setVisible(!m_dismissed);
}

void HintBar::dismiss() {
    m_dismissed = true;
    QSettings().setValue(m_key, true);
    hide();
    emit dismissedNow();
}

} // namespace placer::views
