// An open group (a name scope expanded from its box): a frame around its contents, titled with
// the scope and its node count. Double-clicking the title collapses it again; a device dropped
// on the frame (not on a node in it) pins everything inside.
#pragma once

#include <QGraphicsItem>
#include <QString>

namespace placer::views {

class FrameItem : public QGraphicsItem {
public:
    enum { Type = UserType + 6 };

    FrameItem(int index, QString scope, int members, QRectF rect);

    int type() const override { return Type; }
    /// Its index among the scene's frames (GraphScene::frameMembers).
    int index() const { return m_index; }
    const QString& scope() const { return m_scope; }
    QRectF rect() const { return m_rect; }
    /// The title strip at the frame's top (scene coordinates: the item sits at the origin).
    QRectF titleRect() const;
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    /// The size of a frame's title for `scope` (the frame is at least this wide).
    static QSizeF titleSize(const QString& scope, int members);

private:
    static QString titleText(const QString& scope, int members);
    int m_index;
    QString m_scope;
    int m_members;
    QRectF m_rect;
};

} // namespace placer::views
