// Asked when an ONNX model with symbolic input dimensions is opened from the Open dialog: one
// field per such input, "1,3,224,224", prefilled with the model's fixed dimensions and 1 for the
// symbolic ones (what is planned when nothing is given), as `--input-shape` on the command line.
#pragma once

#include "io/ModelLoader.h"
#include "io/OnnxReader.h"

#include <QDialog>

#include <optional>
#include <vector>

class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace placer::gui {

class InputShapesDialog : public QDialog {
    Q_OBJECT

public:
    InputShapesDialog(const QString& fileName, std::vector<SymbolicInput> inputs,
                      QWidget* parent = nullptr);

    /// The shapes typed, by input name; std::nullopt (with the reason shown) while a field does
    /// not hold a shape.
    std::optional<InputShapes> shapes() const;
    QLineEdit* field(int index) const { return m_fields.at(static_cast<std::size_t>(index)); }

    /// Shows the dialog; std::nullopt when cancelled.
    static std::optional<InputShapes> ask(QWidget* parent, const QString& fileName,
                                          std::vector<SymbolicInput> inputs);

private:
    void validate();

    std::vector<SymbolicInput> m_inputs;
    std::vector<QLineEdit*> m_fields;
    QLabel* m_problem = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
};

} // namespace placer::gui
