package config

// Serve are the properties of contractguard serve, the validating reverse
// proxy, under contractguard.serve. They are here, not in the command,
// because LoadConfig checks them too: a typo under serve: is an error
// wherever the file is read. Their defaults and meaning are the command's
// (docs/proxy.md).
var Serve = []Property{
	{"serve.upstream", URL},
	{"serve.listen", Address},
	{"serve.admin-listen", Address},
	{"serve.read-header-timeout", Duration},
	{"serve.read-timeout", Duration},
	{"serve.write-timeout", Duration},
	{"serve.idle-timeout", Duration},
	{"serve.max-header-bytes", Size},
	{"serve.dial-timeout", Duration},
	{"serve.upstream-timeout", Duration},
	{"serve.shutdown-timeout", Duration},
	{"serve.watch", Bool},
	{"serve.user-header", Text},
	{"serve.preserve-host", Bool},
	{"serve.normalize-path", Bool},
	{"serve.method-override", Bool},
	{"serve.access-log", Bool},
	{"serve.log-level", Text},
}
