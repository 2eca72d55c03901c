// A small RAII layer over SQLite's C API: a connection, prepared statements with bound
// parameters, and transactions that roll back unless committed. Errors are values.
#pragma once

#include "ir/Result.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace placer::store {

class Statement;

class Database {
public:
    /// Opens (or creates) the file with WAL journaling, foreign keys on and a busy timeout.
    /// `readOnly`: opens an existing file that cannot be written (a read-only file system or
    /// folder) as immutable, for reading only; every write then fails as read-only.
    static Result<std::unique_ptr<Database>> open(const std::string& path, bool create = true,
                                                  bool readOnly = false);
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    /// Runs SQL without results (several statements allowed); nullopt on success.
    Status exec(std::string_view sql);
    Result<Statement> prepare(std::string_view sql);
    /// Prepares `sql`, binds `key` to its one parameter and steps to the first row: the statement
    /// at that row (read its columns), nothing when there is none, or the error.
    Result<std::optional<Statement>> firstRow(std::string_view sql, std::string_view key);
    Result<std::optional<Statement>> firstRow(std::string_view sql, std::int64_t key);
    std::int64_t lastInsertId() const;
    const std::string& path() const { return m_path; }
    /// SQLite's message for the last error, with "database is busy" made explicit.
    std::string lastError() const;
    SourceError error(const std::string& what) const;

private:
    Database(sqlite3* db, std::string path) : m_db(db), m_path(std::move(path)) {}
    sqlite3* m_db;
    std::string m_path;
};

/// A prepared statement; parameters are 1-based as in SQLite.
class Statement {
public:
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    ~Statement();

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, double value);
    Statement& bind(int index, std::string_view text);
    Statement& bindNull(int index);

    /// Advances: true with a row, false when done; an error as a value.
    Result<bool> step();
    /// Steps through every row, calling `read` at each (it reads the columns).
    Status forEachRow(const std::function<void(const Statement&)>& read);
    /// Runs to completion (for statements without rows).
    Status run();
    void reset();

    std::int64_t integer(int column) const;
    double real(int column) const;
    std::string text(int column) const;
    bool isNull(int column) const;

private:
    friend class Database;
    Statement(const Database* db, sqlite3_stmt* stmt) : m_db(db), m_stmt(stmt) {}
    const Database* m_db;
    sqlite3_stmt* m_stmt;
};

/// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() succeeded.
class Transaction {
public:
    explicit Transaction(Database& db);
    ~Transaction();
    /// Whether BEGIN worked (it fails with "database is busy" when another writer holds it).
    const Status& begun() const { return m_begun; }
    Status commit();

private:
    Database& m_db;
    Status m_begun;
    bool m_done = false;
};

} // namespace placer::store
