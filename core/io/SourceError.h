// Errors a user can cause with an input file: a location and a plain sentence, returned as values.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace placer {

struct SourceError {
    std::string file;    ///< the file name as the user gave it; may be empty
    int line = 0;        ///< 1-based; 0 when the error has no line (e.g. names a node instead)
    int column = 0;      ///< 1-based
    std::string message; ///< lower-case sentence with concrete context

    /// "model.relay:4:8: unknown operator 'ad'", or without the parts that are unknown.
    std::string toString() const;
};

/// A value or the SourceError that prevented it.
template <typename T> class Result {
public:
    Result(T value) : m_state(std::move(value)) {}
    Result(SourceError error) : m_state(std::move(error)) {}

    bool ok() const { return m_state.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() { return std::get<0>(m_state); }
    const T& value() const { return std::get<0>(m_state); }
    T&& take() { return std::get<0>(std::move(m_state)); }
    const SourceError& error() const { return std::get<1>(m_state); }

private:
    std::variant<T, SourceError> m_state;
};

/// Reads a whole file; on failure returns a SourceError naming the file and the reason.
Result<std::string> readTextFile(const std::string& path);

} // namespace placer
