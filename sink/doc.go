// Package sink stops request input from changing the structure of what an
// application sends to a database, a shell, the file system or another
// server: the runtime half of contractguard's protection, where the edge
// scan only guesses from a value alone.
//
// With Options.SinkProtection on, the guard records each matched request's
// input — the body's string values and member names, the query, the path
// parameters, the headers and cookies — in the request's context. The
// wrappers here find it there, look for each input in the query, command,
// path or URL about to be used, and decide whether where it landed changes
// the call's structure. A call that it would change returns an error
// wrapping [ErrBlocked] (a [*BlockedError] naming the sink, the route and
// the input's place, never its value) and does not happen; the guard counts
// and logs it. In learning mode the call is reported and goes ahead. With no
// input in the context (sink protection off, or a request the guard did not
// match) the wrappers cost one context lookup and nothing else.
//
// # SQL
//
// [WrapDriver], [WrapConnector] and [OpenDB] check every query and prepared
// statement of a database/sql driver; [CheckSQL] is the check alone. An
// input that occurs in the query's text must lie inside one token (a
// string literal, a quoted identifier, a comment, a word or a number), or
// be one whole token; else it changed the query: `' OR '1'='1` closes a
// literal, `1 OR 1=1` spans seven tokens, `admin'--` adds a comment,
// `1; DROP TABLE t` ends the statement. Lists of numbers and of column
// names are let through, as they change no statement. Arguments passed as
// parameters are not in the text and never trip it. Pass the request's
// context: db.QueryContext(r.Context(), …).
//
// # Commands
//
// [Command] and [CheckCmd] check an *exec.Cmd: input that is the program
// (also behind a wrapper: timeout 5 input, sudo -u bob input), an
// argument that starts with "-" (argument injection, `--upload-pack=…`),
// input in a shell script (sh -c, cmd /c, powershell -Command) anywhere but
// the literal text of one word, also in a script nested in one (sh -c
// "sh -c '…'", su -c, watch, ssh's remote command), and input in
// LD_PRELOAD, PATH and their kind. [Commands].AllowPrograms lists
// programs input may choose.
//
// # Files
//
// [Open], [OpenFile], [ReadFile] and [CheckPath] check a file name: input
// that makes it absolute, climbs out of the directory the application put
// it in (also after filepath.Join), names a sensitive file (.env, .git,
// .ssh, /etc/passwd, /proc) or holds a NUL byte. [Files].Base is a directory
// below which input may lead anywhere.
//
// # Outbound HTTP
//
// [Transport] wraps an http.RoundTripper: when a request's host came from
// input (or the request follows a redirect from one that did), the host
// is resolved, every address is checked against loopback, private,
// link-local, unique-local, shared, multicast, reserved and cloud metadata
// addresses in every spelling, and the connection goes to the address that
// was checked, so DNS rebinding does not get around it. [AllowHosts] lists
// hosts input may choose.
//
// docs/sink-protection.md in the module says what each sink catches, what it
// cannot, how to wire it, and the measured rates.
package sink
