// The dialog that asks for the shapes of an ONNX model's open input dimensions.
#include "gui/InputShapesDialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace placer::gui {

InputShapesDialog::InputShapesDialog(const QString& fileName, std::vector<SymbolicInput> inputs,
                                     QWidget* parent)
    : QDialog(parent), m_inputs(std::move(inputs)) {
    setWindowTitle(tr("Input shapes for %1").arg(fileName));
    setMinimumWidth(460);
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(
        tr("These inputs have symbolic dimensions. Give the shapes to plan for; symbolic "
           "dimensions left at 1 are planned as 1."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout();
    for (const SymbolicInput& input : m_inputs) {
        QStringList declared, planned;
        for (const std::string& dim : input.dims) {
            declared << QString::fromStdString(dim);
            const bool fixed =
                !dim.empty() && dim.find_first_not_of("0123456789") == std::string::npos;
            planned << (fixed ? QString::fromStdString(dim) : QStringLiteral("1"));
        }
        auto* edit = new QLineEdit(planned.join(QLatin1Char(',')), this);
        edit->setObjectName(QString::fromStdString("shape:" + input.name));
        edit->setToolTip(tr("Declared: [%1]").arg(declared.join(QStringLiteral(", "))));
        connect(edit, &QLineEdit::textChanged, this, &InputShapesDialog::validate);
        form->addRow(tr("%1 [%2]").arg(QString::fromStdString(input.name),
                                       declared.join(QStringLiteral(", "))),
                     edit);
        m_fields.push_back(edit);
    }
    layout->addLayout(form);
    m_problem = new QLabel(this);
    m_problem->setStyleSheet(QStringLiteral("color: #b00020"));
    m_problem->setWordWrap(true);
    layout->addWidget(m_problem);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Open"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(m_buttons);
    validate();
}

std::optional<InputShapes> InputShapesDialog::shapes() const {
    InputShapes shapes;
    for (std::size_t i = 0; i < m_inputs.size(); ++i) {
        const std::string text =
            m_inputs[i].name + "=" + m_fields[i]->text().remove(QLatin1Char(' ')).toStdString();
        auto parsed = parseInputShape(text);
        if (!parsed || parsed.value().second.size() != m_inputs[i].dims.size())
            return std::nullopt;
        shapes[parsed.value().first] = parsed.value().second;
    }
    return shapes;
}

void InputShapesDialog::validate() {
    QString problem;
    for (std::size_t i = 0; i < m_inputs.size() && problem.isEmpty(); ++i) {
        const std::string text =
            m_inputs[i].name + "=" + m_fields[i]->text().remove(QLatin1Char(' ')).toStdString();
        auto parsed = parseInputShape(text);
        if (!parsed)
            problem = QString::fromStdString(parsed.error().message);
        else if (parsed.value().second.size() != m_inputs[i].dims.size())
            problem = tr("%1 has %2 dimensions")
                          .arg(QString::fromStdString(m_inputs[i].name))
                          .arg(m_inputs[i].dims.size());
    }
    m_problem->setText(problem);
    m_problem->setVisible(!problem.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
}

std::optional<InputShapes> InputShapesDialog::ask(QWidget* parent, const QString& fileName,
                                                  std::vector<SymbolicInput> inputs) {
    InputShapesDialog dialog(fileName, std::move(inputs), parent);
    if (dialog.exec() != QDialog::Accepted)
        return std::nullopt;
    return dialog.shapes();
}

} // namespace placer::gui
