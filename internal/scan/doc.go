// Package scan looks for attack payloads in request values: SQL injection
// and cross-site scripting (with libinjection, as OWASP Coraza uses it),
// path traversal, shell command injection, NoSQL operator injection and
// prototype pollution. It reports a class, never the payload.
package scan
