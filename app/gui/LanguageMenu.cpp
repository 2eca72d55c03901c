// View ▸ Language: the menu of translations, and keeping the choice for the next start.
#include "gui/LanguageMenu.h"

#include <QActionGroup>
#include <QCoreApplication>
#include <QMenu>
#include <QSettings>
#include <QStatusBar>

#include <utility>

namespace placer::gui {

QMenu* addLanguageMenu(QMenu* parent, QStatusBar* status) {
    QMenu* language = parent->addMenu(QCoreApplication::translate("LanguageMenu", "&Language"));
    auto* languages = new QActionGroup(language);
    const QString current = QSettings().value(QStringLiteral("language")).toString();
    const std::pair<QString, QString> choices[] = {
        {QCoreApplication::translate("LanguageMenu", "System Default"), QString()},
        {QStringLiteral("English"), QStringLiteral("en")},
        {QStringLiteral("Deutsch"), QStringLiteral("de")},
        {QStringLiteral("简体中文"), QStringLiteral("zh_CN")}};
    for (const auto& [label, code] : choices) {
        QAction* action = language->addAction(label);
        action->setCheckable(true);
        action->setChecked(code == current);
        languages->addAction(action);
        QObject::connect(action, &QAction::triggered, status, [status, code = code] {
            QSettings().setValue(QStringLiteral("language"), code);
            status->showMessage(
                QCoreApplication::translate(
                    "LanguageMenu",
                    "The new language applies when Placement Explorer starts again."),
                8000);
        });
    }
    return language;
}

} // namespace placer::gui
