// The canvas's parts without the main window: a document, its scene, a view in a shown window
// and the layout controller, for the tests of views/.
#pragma once

#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/LayoutController.h"
#include "views/PlacementDocument.h"

#include <QWidget>

namespace placer::test {

struct CanvasFixture {
    views::PlacementDocument document;
    views::GraphScene scene{&document};
    QWidget window;
    views::GraphView* view = new views::GraphView(&scene, &window);
    views::LayoutController* layout = new views::LayoutController(&document, &scene, view, &window);

    explicit CanvasFixture(QSize size) {
        window.resize(size);
        view->resize(size);
        window.show();
    }
};

} // namespace placer::test
