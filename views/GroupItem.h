// A collapsed group of nodes (a name scope such as /layer1/): one box whose colour bar shows the
// share of its nodes on each device, with the count of pins and a red outline on conflicts.
#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QString>

#include <utility>
#include <vector>

namespace placer::views {

class GroupItem : public QGraphicsItem {
public:
    enum { Type = UserType + 4 };

    GroupItem(int unit, QString scope, int members, QSizeF size);

    int type() const override { return Type; }
    /// The group's index among the scene's units.
    int unit() const { return m_unit; }
    const QString& scope() const { return m_scope; }
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    /// Device shares (colour, weight: a node counts alike on any device), pins and conflicts
    /// inside the group.
    void setPlacement(std::vector<std::pair<QColor, int>> shares, int pins, bool conflict);
    const std::vector<std::pair<QColor, int>>& shares() const { return m_shares; }
    QSizeF boxSize() const { return m_size; }
    /// A run's time for the nodes inside, summed (ms); negative hides it.
    void setTiming(double millis);
    double timingMillis() const { return m_millis; }

    static QSizeF sizeFor(const QString& scope, int members);

private:
    int m_unit;
    QString m_scope;
    int m_members;
    QSizeF m_size;
    std::vector<std::pair<QColor, int>> m_shares;
    int m_pins = 0;
    bool m_conflict = false;
    double m_millis = -1;
};

} // namespace placer::views
