// Package sqlitetest holds the tests of package sink that need a real
// database: the database/sql wrappers against SQLite (modernc.org/sqlite,
// pure Go), and the differential test of the SQL tokenizer against
// SQLite's own reading of the same queries. It is a module of its own so
// that the driver never reaches the users of contractguard.
package sqlitetest
