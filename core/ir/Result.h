// Core's one error form, for every layer of core: an operation that yields a value returns
// Result<T>, one that yields none returns Status. A failure is a SourceError: where in the input
// it is (file, line, column) when it has a place there, and a plain lower-case sentence.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace placer {

struct SourceError {
    std::string file;    ///< the file name as the user gave it; may be empty
    int line = 0;        ///< 1-based; 0 when the error has no line (e.g. names a node instead)
    int column = 0;      ///< 1-based
    std::string message; ///< lower-case sentence with concrete context

    /// An error with no place in a file: just the sentence.
    static SourceError sentence(std::string message) { return {{}, 0, 0, std::move(message)}; }
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

/// Success, or the SourceError that stopped an operation that yields no value.
class [[nodiscard]] Status {
public:
    Status() = default; ///< success
    Status(SourceError error) : m_error(std::move(error)) {}

    /// No operator bool: `if (status)` would read as "if failed" to anyone used to the
    /// optional<SourceError> this replaced, so every test says ok().
    bool ok() const { return !m_error; }
    const SourceError& error() const { return *m_error; }

private:
    std::optional<SourceError> m_error;
};

} // namespace placer
