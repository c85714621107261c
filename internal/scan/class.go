package scan

// The classes of finding and the message each is reported with.

// Class is what a finding looks like.
type Class uint8

// The classes. A value is reported once, with the first class it matches
// in the order String checks them: XSS (markup is the most specific), SQL
// injection, command injection, path traversal, NoSQL operators,
// prototype pollution.
const (
	None Class = iota
	SQLInjection
	XSS
	CommandInjection
	PathTraversal
	NoSQLInjection
	PrototypePollution
)

// Message is the detail message of a finding of class c.
func (c Class) Message() string {
	switch c {
	case SQLInjection:
		return "possible SQL injection"
	case XSS:
		return "possible cross-site scripting"
	case CommandInjection:
		return "possible command injection"
	case PathTraversal:
		return "possible path traversal"
	case NoSQLInjection:
		return "possible NoSQL operator injection"
	case PrototypePollution:
		return "possible prototype pollution"
	}
	return ""
}
