// RAII over SQLite's C API: connections, statements, bindings and transactions.
#include "store/Sqlite.h"

#include <sqlite3.h>

#include <cstdio>
#include <string_view>

namespace placer::store {

Result<std::unique_ptr<Database>> Database::open(const std::string& path, bool create,
                                                 bool readOnly) {
    sqlite3* db = nullptr;
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_FULLMUTEX;
    std::string name = path;
    if (readOnly) {
        // file:PATH?immutable=1: no journal, no -shm, nothing written beside the file.
        flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX;
        name = "file:";
        for (const char c : path) {
            if (c == '?' || c == '#' || c == '%') {
                char escaped[4];
                std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(c));
                name += escaped;
            } else {
                name += c;
            }
        }
        name += "?immutable=1";
    }
    const int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
    if (rc != SQLITE_OK) {
        const std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        sqlite3_close(db);
        return SourceError{path, 0, 0, "cannot open the database: " + message};
    }
    std::unique_ptr<Database> database(new Database(db, path));
    sqlite3_busy_timeout(db, 5000);
    // A file that is not SQLite fails here, on the first read of its header.
    for (const char* pragma :
         {"PRAGMA foreign_keys = ON", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL"}) {
        if (readOnly && std::string_view(pragma) != "PRAGMA foreign_keys = ON")
            continue;
        if (Status status = database->exec(pragma); !status.ok())
            return SourceError{path, 0, 0, status.error().message};
    }
    return database;
}

Database::~Database() {
    sqlite3_close_v2(m_db);
}

std::string Database::lastError() const {
    const int code = sqlite3_errcode(m_db);
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
        return "database is busy (another program is writing it); try again";
    if (code == SQLITE_NOTADB)
        return "the file is not a Placement Explorer database (not SQLite)";
    if (code == SQLITE_CORRUPT)
        return "the database file is damaged (truncated or overwritten)";
    if (code == SQLITE_FULL)
        return "the disk is full: nothing was saved, and what was saved before is intact; free "
               "some space and save again";
    if (code == SQLITE_READONLY)
        return "the workspace is read-only (its file, folder or file system cannot be written)";
    return sqlite3_errmsg(m_db);
}

SourceError Database::error(const std::string& what) const {
    return SourceError{m_path, 0, 0, what + ": " + lastError()};
}

Status Database::exec(std::string_view sql) {
    const std::string text(sql);
    char* message = nullptr;
    if (sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &message) == SQLITE_OK)
        return {};
    sqlite3_free(message);
    return error("SQL failed");
}

Result<Statement> Database::prepare(std::string_view sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(m_db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) !=
        SQLITE_OK)
        return error("cannot prepare a statement");
    return Statement(this, stmt);
}

namespace {

template <typename Key>
Result<std::optional<Statement>> firstRowOf(Database& db, std::string_view sql, Key key) {
    auto query = db.prepare(sql);
    if (!query)
        return query.error();
    query.value().bind(1, key);
    auto row = query.value().step();
    if (!row)
        return row.error();
    if (!row.value())
        return std::optional<Statement>();
    return std::optional<Statement>(query.take());
}

} // namespace

Result<std::optional<Statement>> Database::firstRow(std::string_view sql, std::string_view key) {
    return firstRowOf(*this, sql, key);
}

Result<std::optional<Statement>> Database::firstRow(std::string_view sql, std::int64_t key) {
    return firstRowOf(*this, sql, key);
}

std::int64_t Database::lastInsertId() const {
    return sqlite3_last_insert_rowid(m_db);
}

Statement::Statement(Statement&& other) noexcept : m_db(other.m_db), m_stmt(other.m_stmt) {
    other.m_stmt = nullptr;
}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(m_stmt);
        m_db = other.m_db;
        m_stmt = other.m_stmt;
        other.m_stmt = nullptr;
    }
    return *this;
}

Statement::~Statement() {
    sqlite3_finalize(m_stmt);
}

Statement& Statement::bind(int index, std::int64_t value) {
    sqlite3_bind_int64(m_stmt, index, value);
    return *this;
}

Statement& Statement::bind(int index, double value) {
    sqlite3_bind_double(m_stmt, index, value);
    return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
    // Stored as TEXT with its length: the bytes come back as given, invalid UTF-8 included.
    sqlite3_bind_text(m_stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
}

Statement& Statement::bindNull(int index) {
    sqlite3_bind_null(m_stmt, index);
    return *this;
}

Status Statement::forEachRow(const std::function<void(const Statement&)>& read) {
    for (;;) {
        auto row = step();
        if (!row)
            return row.error();
        if (!row.value())
            return {};
        read(*this);
    }
}

Result<bool> Statement::step() {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    return m_db->error("SQL step failed");
}

Status Statement::run() {
    return forEachRow([](const Statement&) {});
}

void Statement::reset() {
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
}

std::int64_t Statement::integer(int column) const {
    return sqlite3_column_int64(m_stmt, column);
}

double Statement::real(int column) const {
    return sqlite3_column_double(m_stmt, column);
}

std::string Statement::text(int column) const {
    const void* data = sqlite3_column_blob(m_stmt, column);
    const int bytes = sqlite3_column_bytes(m_stmt, column);
    return data ? std::string(static_cast<const char*>(data), static_cast<std::size_t>(bytes))
                : std::string();
}

bool Statement::isNull(int column) const {
    return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

Transaction::Transaction(Database& db) : m_db(db) {
    m_begun = m_db.exec("BEGIN IMMEDIATE");
    m_done = !m_begun.ok(); // nothing to roll back
}

Transaction::~Transaction() {
    if (!m_done)
        (void)m_db.exec("ROLLBACK");
}

Status Transaction::commit() {
    if (!m_begun.ok())
        return m_begun;
    Status status = m_db.exec("COMMIT");
    if (status.ok())
        m_done = true;
    return status;
}

} // namespace placer::store
