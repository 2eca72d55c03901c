// View ▸ Language: the user interface language, kept in QSettings ("language") and applied by
// main() when the application starts (translations/).
#pragma once

class QMenu;
class QStatusBar;

namespace placer::gui {

/// Adds the Language submenu to `parent`; choosing one says in `status` when it applies.
QMenu* addLanguageMenu(QMenu* parent, QStatusBar* status);

} // namespace placer::gui
