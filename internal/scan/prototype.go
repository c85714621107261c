package scan

import "strings"

// Prototype pollution: property paths through __proto__ or
// constructor.prototype.

// protoPath reports a property path through __proto__ or
// constructor.prototype, as merge and set helpers read them
// (a.__proto__.x, constructor[prototype][x]), and as JSON pointers and
// patches write them (/constructor/prototype/x). Any constructor may be
// the one: constructor.constructor.prototype reaches Function's. f is
// bytesIn(s): __proto__ needs an _, and a path to prototype a y and the
// length of "constructor.prototype".
func protoPath(s string, f uint32) bool {
	if f&hasUnderscore != 0 && strings.Contains(s, "__proto__") {
		return true
	}
	if f&hasY == 0 || len(s) < len("constructor.prototype") || !strings.Contains(s, "prototype") {
		return false
	}
	for i := strings.Index(s, "constructor"); i >= 0; {
		rest := s[i+len("constructor"):]
		step := strings.TrimLeft(rest, `./[]"' :{`)
		if len(step) < len(rest) && strings.HasPrefix(step, "prototype") && // a step between them
			(len(step) == len("prototype") || !isWordByte(step[len("prototype")]) || step[len("prototype")] == '.' || step[len("prototype")] == '/') {
			return true
		}
		j := strings.Index(rest, "constructor")
		if j < 0 {
			return false
		}
		i += len("constructor") + j
	}
	return false
}
