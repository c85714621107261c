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

// Name is the class's name in metrics: sql_injection, xss,
// command_injection, path_traversal, nosql_injection,
// prototype_pollution; "" for None.
func (c Class) Name() string {
	if int(c) < len(metricNames) {
		return metricNames[c]
	}
	return ""
}

var metricNames = [...]string{"", "sql_injection", "xss", "command_injection", "path_traversal", "nosql_injection", "prototype_pollution"}

// Classes is the number of classes, None included: a Class indexes an
// array of this length.
const Classes = len(metricNames)

// ClassOf is the class a finding's message names (None for another
// message).
func ClassOf(message string) Class {
	for c := SQLInjection; int(c) < Classes; c++ {
		if c.Message() == message {
			return c
		}
	}
	return None
}
