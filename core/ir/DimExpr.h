// Dimensions as expressions of the dimensions a model names ("batch", "seq"): a small symbolic
// arithmetic for shapes that are only known at run time, and the fit that finds such an
// expression from the sizes a dimension takes at several values of the names.
#pragma once

#include "ir/DType.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace placer {

/// Values of named dimensions: {"batch": 2, "seq": 128}.
using SymbolValues = std::map<std::string, std::int64_t>;

/// A polynomial in named dimensions with rational coefficients, kept as integer terms over one
/// positive divisor: "seq", "2*seq", "batch*heads", "seq+1", "seq*seq", "(seq*seq+seq)/2".
/// Exact: it is only ever a fact where it was checked (fitDimExpr).
class DimExpr {
public:
    /// A product of names, sorted, a name repeated for its power: {"seq", "seq"} is seq².
    using Monomial = std::vector<std::string>;

    DimExpr() = default; ///< 0
    static DimExpr constant(std::int64_t value);
    static DimExpr symbol(const std::string& name);
    /// sum(coefficient * monomial) / divisor; an error when the divisor is not positive or the
    /// arithmetic overflows.
    static std::optional<DimExpr> fromTerms(const std::map<Monomial, std::int64_t>& terms,
                                            std::int64_t divisor);

    bool isConstant() const;
    /// The value when it names no dimension.
    std::optional<std::int64_t> constantValue() const;
    /// The names it uses.
    std::set<std::string> symbols() const;
    /// Its highest total power (0 for a constant).
    int degree() const;

    /// Sum and product; std::nullopt where a coefficient would overflow.
    std::optional<DimExpr> plus(const DimExpr& other) const;
    std::optional<DimExpr> times(const DimExpr& other) const;

    /// Its value where every name it uses has one; std::nullopt where a name has none, the value
    /// overflows, or the division is not exact there.
    std::optional<std::int64_t> evaluate(const SymbolValues& values) const;

    /// "batch*seq", "2*seq+1", "seq*seq", "(seq+1)/2", "7".
    std::string toString() const;
    /// toString(), in parentheses where it is a sum or a quotient (a factor of a product).
    std::string toFactorString() const;

    const std::map<Monomial, std::int64_t>& terms() const { return m_terms; }
    std::int64_t divisor() const { return m_divisor; }

    bool operator==(const DimExpr&) const = default;

private:
    /// Divides terms and divisor by their common factor; drops zero terms.
    void normalise();

    std::map<Monomial, std::int64_t> m_terms; ///< no zero coefficients
    std::int64_t m_divisor = 1;               ///< > 0, coprime with the terms together
};

/// "batch=2, seq=16" (empty for none).
std::string symbolValuesText(const SymbolValues& values);

/// A value's shape in named dimensions; std::nullopt for a dimension that no expression of
/// them gives (found by the data, or not a polynomial of them).
using SymbolicShape = std::vector<std::optional<DimExpr>>;

/// Whether any dimension of `shape` names a dimension or is unknown (otherwise it is static).
bool isSymbolic(const SymbolicShape& shape);
/// "batch×seq×64", "(batch*seq)×16", "batch×?×4"; "scalar" for rank 0.
std::string symbolicShapeText(const SymbolicShape& shape);
/// The shape's size in bytes for elements of `dtype`: "batch×seq×1.0 KiB", "(batch*seq)×64 B";
/// std::nullopt where a dimension is unknown.
std::optional<std::string> symbolicBytesText(const SymbolicShape& shape, DType dtype);
/// The shape at `values`; std::nullopt where a dimension has no value there.
std::optional<std::vector<std::int64_t>> evaluateShape(const SymbolicShape& shape,
                                                       const SymbolValues& values);

/// The polynomial of total degree at most `maxDegree` in `symbols` that takes `values[p]` at
/// `points[p]` (each point gives every symbol a value, in the order of `symbols`), when exactly
/// one does; std::nullopt when none does, the points do not fix one, or a coefficient overflows.
/// The points should hold a downward-closed grid for that degree (fitPoints) plus points to
/// check the fit at.
std::optional<DimExpr> fitDimExpr(const std::vector<std::string>& symbols,
                                  const std::vector<std::vector<std::int64_t>>& points,
                                  const std::vector<std::int64_t>& values, int maxDegree);

/// Points that fix a polynomial of total degree `maxDegree` in `count` names, then `checks`
/// more at which the fit is checked: the grid of `grid[k_1] ... grid[k_count]` with
/// k_1 + ... + k_count <= maxDegree (unisolvent for that degree), then points whose values
/// differ by name and from the grid's. `grid` needs maxDegree + 1 distinct values.
std::vector<std::vector<std::int64_t>> fitPoints(std::size_t count, int maxDegree,
                                                 const std::vector<std::int64_t>& grid, int checks);

} // namespace placer
