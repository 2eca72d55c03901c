#include "views/SceneDigest.h"

#include "views/CopyBadgeItem.h"
#include "views/FrameItem.h"
#include "views/GroupItem.h"
#include "views/NodeItem.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDockWidget>
#include <QGraphicsScene>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSysInfo>
#include <QTabBar>
#include <QTextBrowser>
#include <QTextEdit>

#include <algorithm>

namespace placer::views {

namespace {

/// `text` with its numbers as '#' and this machine's name as "HOST".
QString folded(QString text) {
    static const QRegularExpression number(QStringLiteral("\\d+([.,]\\d+)*"));
    static const QString host = QSysInfo::machineHostName();
    static const QRegularExpression hostWord(
        QStringLiteral("\\b") + QRegularExpression::escape(host) + QStringLiteral("\\b"));
    if (!host.isEmpty())
        text.replace(hostWord, QStringLiteral("HOST"));
    return text.replace(number, QStringLiteral("#")).simplified();
}

/// What `widget` itself shows as text, or a null string for a widget that shows none.
QString widgetText(const QWidget* widget) {
    if (const auto* label = qobject_cast<const QLabel*>(widget))
        return label->text();
    if (const auto* button = qobject_cast<const QAbstractButton*>(widget))
        return button->text() +
               (button->isCheckable() && button->isChecked() ? QStringLiteral(" [on]") : QString());
    if (const auto* line = qobject_cast<const QLineEdit*>(widget))
        return line->text();
    if (const auto* plain = qobject_cast<const QPlainTextEdit*>(widget))
        return plain->toPlainText();
    // A report's first line (what it reports); the rest follows the run, whose measures
    // decide which remarks it makes.
    if (const auto* report = qobject_cast<const QTextBrowser*>(widget))
        return report->toPlainText().section(QLatin1Char('\n'), 0, 0);
    if (const auto* rich = qobject_cast<const QTextEdit*>(widget))
        return rich->toPlainText();
    if (const auto* combo = qobject_cast<const QComboBox*>(widget))
        return combo->currentText();
    if (const auto* spin = qobject_cast<const QAbstractSpinBox*>(widget))
        return spin->text();
    if (const auto* dock = qobject_cast<const QDockWidget*>(widget))
        return dock->windowTitle();
    if (const auto* tabs = qobject_cast<const QTabBar*>(widget)) {
        QStringList names;
        for (int i = 0; i < tabs->count(); ++i)
            names << (i == tabs->currentIndex() ? QStringLiteral("*") : QString()) +
                         tabs->tabText(i);
        return names.join(QLatin1Char('|'));
    }
    if (const auto* view = qobject_cast<const QAbstractItemView*>(widget)) {
        const QAbstractItemModel* model = view->model();
        QStringList cells;
        for (int row = 0; model && row < model->rowCount(); ++row)
            for (int column = 0; column < model->columnCount(); ++column)
                cells << model->index(row, column).data().toString();
        return cells.join(QLatin1Char('|'));
    }
    return QString();
}

QString itemLine(const QGraphicsItem* item) {
    switch (item->type()) {
    case NodeItem::Type: {
        const auto* node = static_cast<const NodeItem*>(item);
        return QStringLiteral("node %1 %2%3%4%5%6")
            .arg(node->name(), node->fill().name(),
                 node->isPinned() ? QStringLiteral(" pinned") : QString(),
                 node->isConflicted() ? QStringLiteral(" conflict") : QString(),
                 node->timingMillis() >= 0 ? QStringLiteral(" timed") : QString(),
                 node->fusedInto().isEmpty() ? QString() : QStringLiteral(" fused"));
    }
    case GroupItem::Type:
        return QStringLiteral("group ") + static_cast<const GroupItem*>(item)->scope();
    case FrameItem::Type:
        return QStringLiteral("frame ") + static_cast<const FrameItem*>(item)->scope();
    case CopyBadgeItem::Type:
        return QStringLiteral("badge ") + folded(static_cast<const CopyBadgeItem*>(item)->text());
    default:
        return QStringLiteral("item %1").arg(item->type());
    }
}

} // namespace

QStringList sceneLines(const QWidget* root, const QGraphicsScene* scene) {
    QStringList lines;
    std::vector<const QWidget*> widgets{root};
    for (const QWidget* child : root->findChildren<QWidget*>())
        widgets.push_back(child);
    for (const QWidget* widget : widgets) {
        if (widget != root && !widget->isVisibleTo(root))
            continue;
        const QString text = widgetText(widget);
        if (text.isNull() && widget->objectName().isEmpty())
            continue;
        lines << QStringLiteral("%1 %2: %3")
                     .arg(QString::fromLatin1(widget->metaObject()->className()),
                          widget->objectName(), folded(text));
    }
    if (scene) {
        QStringList items;
        for (const QGraphicsItem* item : scene->items())
            if (item->isVisible())
                items << itemLine(item);
        std::sort(items.begin(), items.end());
        lines << items;
    }
    return lines;
}

QString sceneDigest(const QWidget* root, const QGraphicsScene* scene) {
    const QByteArray text = sceneLines(root, scene).join(QLatin1Char('\n')).toUtf8();
    return QString::fromLatin1(
        QCryptographicHash::hash(text, QCryptographicHash::Sha1).toHex().left(16));
}

} // namespace placer::views
