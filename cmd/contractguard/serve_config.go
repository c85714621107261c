package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/contractguard/contractguard"
	"github.com/contractguard/contractguard/internal/config"
)

// settings are contractguard serve's settings: defaults, then the
// contractguard.serve.… properties of the configuration file, then their
// CONTRACTGUARD_SERVE_… environment variables, then the flags.
type settings struct {
	Upstream          *url.URL
	Listen            string
	AdminListen       string // "off": no admin listener
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int64
	DialTimeout       time.Duration
	UpstreamTimeout   time.Duration
	ShutdownTimeout   time.Duration
	Watch             bool
	UserHeader        string // "": off
	PreserveHost      bool
	NormalizePath     bool
	MethodOverride    bool
	AccessLog         bool
	LogLevel          slog.Level
}

// serveDefaults are the defaults of the serve properties, as text a
// property may hold: docs/proxy.md explains each.
var serveDefaults = map[string]string{
	"serve.upstream":            "",
	"serve.listen":              ":8080",
	"serve.admin-listen":        "127.0.0.1:9090",
	"serve.read-header-timeout": "10s",
	"serve.read-timeout":        "60s",
	"serve.write-timeout":       "60s",
	"serve.idle-timeout":        "120s",
	"serve.max-header-bytes":    "65536",
	"serve.dial-timeout":        "5s",
	"serve.upstream-timeout":    "30s",
	"serve.shutdown-timeout":    "20s",
	"serve.watch":               "true",
	"serve.user-header":         "",
	"serve.preserve-host":       "true",
	"serve.normalize-path":      "true",
	"serve.method-override":     "false",
	"serve.access-log":          "true",
	"serve.log-level":           "info",
}

// serveUsage is each property's flag help.
var serveUsage = map[string]string{
	"serve.upstream":            "the service to guard, http://host:port[/base] (required)",
	"serve.listen":              "`address` of the guarded proxy",
	"serve.admin-listen":        "`address` of /metrics, /healthz and /readyz, or off",
	"serve.read-header-timeout": "longest `time` to read a request's headers",
	"serve.read-timeout":        "longest `time` to read a whole request, body included",
	"serve.write-timeout":       "longest `time` to send a response once the upstream answers (0: none; event streams and websockets have none)",
	"serve.idle-timeout":        "longest `time` a keep-alive connection waits for its next request",
	"serve.max-header-bytes":    "largest request header block, in `bytes` (431 above)",
	"serve.dial-timeout":        "longest `time` to connect to the upstream (504 after)",
	"serve.upstream-timeout":    "longest `time` to wait for the upstream's response headers (504 after)",
	"serve.shutdown-timeout":    "longest `time` in-flight requests get to finish on SIGTERM",
	"serve.watch":               "reload the contracts when a file in the contracts folder changes",
	"serve.user-header":         "`header` a trusted gateway sets: its value is context.user (JSON object, or a string id); empty: off",
	"serve.preserve-host":       "send the client's Host to the upstream (false: the upstream's host)",
	"serve.normalize-path":      "remove . and .. segments and repeated slashes before the guard and the upstream see the path",
	"serve.method-override":     "honour X-HTTP-Method-Override on POST (false: the header is removed)",
	"serve.access-log":          "log one line per request at info level",
	"serve.log-level":           "debug, info, warn or error",
}

const serveHelp = `Usage: contractguard serve --upstream URL [--config FILE] [--contracts DIR] [options]

Runs a validating reverse proxy: every request is checked against the
contracts, as contractguard's middleware would check it, and only what
passes reaches the upstream service, with exactly the bytes that were
checked. The contracts and the guard's settings come from the
contractguard: properties of FILE (or the CONTRACTGUARD_… environment
variables without one); the proxy's from contractguard.serve.…, their
CONTRACTGUARD_SERVE_… variables, and these flags, which win over both.

Signals: SIGTERM and SIGINT stop accepting, let in-flight requests finish
(at most --shutdown-timeout) and exit; SIGHUP reloads the contracts (a
broken set is logged and the old one stays).

Examples:
  contractguard serve --config contractguard.yaml --upstream http://127.0.0.1:3000
  CONTRACTGUARD_SERVE_UPSTREAM=http://127.0.0.1:8081 contractguard serve --contracts contracts --listen :8080

See docs/proxy.md for every setting, the error bodies and deployment.

Options:
`

// loadSettings reads the settings and the guard's Options from args, the
// configuration file and the environment.
func loadSettings(args []string, stdout, stderr io.Writer) (settings, contractguard.Options, int, bool) {
	fs := newFlags("serve", serveHelp, stderr)
	configPath := fs.String("config", "", "the configuration `FILE` (contractguard: properties); without one, the environment alone")
	contracts := fs.String("contracts", "", "the contracts `DIR`ectory (wins over contracts-dir)")
	flagText := map[string]*propertyFlag{}
	for _, p := range config.Serve {
		name := strings.TrimPrefix(p.Name, "serve.")
		usage := fmt.Sprintf("%s (env %s)", serveUsage[p.Name], config.EnvName(p.Name))
		f := &propertyFlag{text: serveDefaults[p.Name], isBool: p.Kind == config.Bool}
		flagText[p.Name] = f
		fs.Var(f, name, usage)
	}
	if code, ok := parse(fs, args, stdout); !ok {
		return settings{}, contractguard.Options{}, code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "contractguard serve: unexpected argument %q\n", fs.Arg(0))
		return settings{}, contractguard.Options{}, 2, false
	}
	var errs []error
	var opts contractguard.Options
	var err error
	var fileValues config.Values
	var fileWhere map[string]string
	if *configPath != "" {
		opts, err = contractguard.LoadConfig(*configPath)
		if err == nil {
			var problems []error
			fileValues, fileWhere, problems, err = config.ReadFileWhere(*configPath, config.Serve, "serve")
			errs = append(errs, problems...) // none: LoadConfig checked serve.* already
		}
	} else {
		opts, err = contractguard.ConfigFromEnv()
	}
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 { // the file is wrong: the rest would only add noise
		for _, e := range dedupe(errs) {
			fmt.Fprintf(stderr, "contractguard serve: %v\n", e)
		}
		return settings{}, contractguard.Options{}, 2, false
	}
	envValues, problems := config.Env(config.Serve)
	errs = append(errs, problems...)
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	values := config.Values{}
	whereSet := map[string]string{} // where each value not a default was set, for settingsOf's errors
	for _, p := range config.Serve {
		raw, where := serveDefaults[p.Name], "default"
		if set[strings.TrimPrefix(p.Name, "serve.")] {
			raw, where = flagText[p.Name].text, "--"+strings.TrimPrefix(p.Name, "serve.")
			whereSet[p.Name] = where
		} else if v, ok := envValues[p.Name]; ok {
			values[p.Name], whereSet[p.Name] = v, "environment "+config.EnvName(p.Name)
			continue
		} else if v, ok := fileValues[p.Name]; ok {
			values[p.Name], whereSet[p.Name] = v, fileWhere[p.Name]
			continue
		}
		if raw == "" && where == "default" && (p.Kind == config.URL || p.Kind == config.Address) {
			continue // unset; an empty flag (--listen=) is read, and refused, as the file's or the environment's empty value is
		}
		v, err := config.Parse(p.Kind, raw)
		if err != nil {
			errs = append(errs, &config.Error{Where: where, Property: config.Root + "." + p.Name, Err: err})
			continue
		}
		values[p.Name] = v
	}
	var s settings
	if len(errs) == 0 { // every value has its kind
		if s, err = settingsOf(values, whereSet); err != nil {
			errs = append(errs, err)
		}
	}
	if *contracts != "" {
		opts.ContractsDir = *contracts
	}
	if len(errs) > 0 {
		for _, e := range dedupe(errs) {
			fmt.Fprintf(stderr, "contractguard serve: %v\n", e)
		}
		return settings{}, contractguard.Options{}, 2, false
	}
	return s, opts, 0, true
}

// settingsOf turns property values into settings and checks what one
// property alone cannot. where says where each value not a default was
// set (file:line, the environment variable, the flag): its errors name
// it, as the reader's do.
func settingsOf(v config.Values, where map[string]string) (settings, error) {
	d := func(name string) time.Duration { return v[name].(time.Duration) }
	b := func(name string) bool { return v[name].(bool) }
	s := settings{
		Listen:            v["serve.listen"].(string),
		AdminListen:       v["serve.admin-listen"].(string),
		ReadHeaderTimeout: d("serve.read-header-timeout"),
		ReadTimeout:       d("serve.read-timeout"),
		WriteTimeout:      d("serve.write-timeout"),
		IdleTimeout:       d("serve.idle-timeout"),
		MaxHeaderBytes:    v["serve.max-header-bytes"].(int64),
		DialTimeout:       d("serve.dial-timeout"),
		UpstreamTimeout:   d("serve.upstream-timeout"),
		ShutdownTimeout:   d("serve.shutdown-timeout"),
		Watch:             b("serve.watch"),
		UserHeader:        strings.TrimSpace(v["serve.user-header"].(string)),
		PreserveHost:      b("serve.preserve-host"),
		NormalizePath:     b("serve.normalize-path"),
		MethodOverride:    b("serve.method-override"),
		AccessLog:         b("serve.access-log"),
	}
	var errs []error
	fail := func(name string, err error) {
		e := &config.Error{Where: where["serve."+name], Property: config.Root + ".serve." + name, Err: err}
		if e.Where == "" { // a default
			errs = append(errs, fmt.Errorf("%s: %w", e.Property, err))
			return
		}
		errs = append(errs, e)
	}
	if u, ok := v["serve.upstream"].(*url.URL); ok {
		s.Upstream = u
	} else {
		errs = append(errs, errors.New("contractguard.serve.upstream: the service to guard is required: --upstream http://127.0.0.1:3000, or contractguard.serve.upstream, or CONTRACTGUARD_SERVE_UPSTREAM"))
	}
	// 0 is none only where the docs say so (read, write and upstream
	// timeouts); here it would lift a limit without a word: no bound on
	// a client sending its headers (slowloris), idle connections kept for
	// ever, every in-flight request cut at SIGTERM, net/http's 1 MiB of
	// headers, dials left to the system's minutes.
	for _, z := range []struct {
		name string
		zero bool
		why  string
	}{
		{"read-header-timeout", s.ReadHeaderTimeout == 0, "no limit on a client sending its headers slowly"},
		{"idle-timeout", s.IdleTimeout == 0, "kept-alive connections held for ever"},
		{"shutdown-timeout", s.ShutdownTimeout == 0, "every in-flight request cut at SIGTERM"},
		{"max-header-bytes", s.MaxHeaderBytes == 0, "net/http's own limit, 1 MiB"},
		{"dial-timeout", s.DialTimeout == 0, "connecting left to the system's timeout, minutes"},
	} {
		if z.zero {
			fail(z.name, fmt.Errorf("must be more than 0 (0 would mean %s)", z.why))
		}
	}
	// net/http reads at most MaxHeaderBytes+4096 bytes of a request's head,
	// an int64 sum: past this it wraps negative, and every request is
	// refused 431 while the proxy started without a word.
	if maxHeaderBytes := int64(math.MaxInt - 4096); s.MaxHeaderBytes > maxHeaderBytes {
		fail("max-header-bytes", fmt.Errorf("must be at most %d, not %d", maxHeaderBytes, s.MaxHeaderBytes))
	}
	if s.Listen == "off" {
		fail("listen", errors.New("the proxy needs an address; off is only for admin-listen"))
	}
	if err := s.LogLevel.UnmarshalText([]byte(v["serve.log-level"].(string))); err != nil {
		fail("log-level", fmt.Errorf("want debug, info, warn or error, not %q", v["serve.log-level"]))
	}
	if h := s.UserHeader; h != "" && !validHeaderName(h) {
		fail("user-header", fmt.Errorf("%q is not a header name", h))
	} else if why := unusableUserHeader(h); why != "" {
		fail("user-header", fmt.Errorf("%s %s, so it cannot carry the user", h, why))
	}
	return s, errors.Join(errs...)
}

// unusableUserHeader says why a header cannot be the trusted user header,
// "" when it can: the proxy removes it (a hop-by-hop header, Forwarded, a
// method override it applied), so the service never gets what the guard
// read; or it writes it itself (X-Forwarded-For, -Host, -Proto, from
// the connection and the client's Host), so the client, or the proxy,
// would choose context.user; or Go keeps it out of the header map (Host).
func unusableUserHeader(h string) string {
	switch h = textproto.CanonicalMIMEHeaderKey(h); h {
	case "":
		return ""
	case "Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Http2-Settings", "Forwarded":
		return "is not forwarded to the service"
	case "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto":
		return "is written by the proxy"
	case "Host":
		return "is the request's host"
	}
	if slices.Contains(overrideHeaders, h) { // h is canonical, as the list is
		return "is a method override the proxy may apply and remove"
	}
	return ""
}

func validHeaderName(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// dedupe lists the errors of errs, joined ones flattened, each message once.
func dedupe(errs []error) []error {
	seen := map[string]bool{}
	var out []error
	for _, e := range errs {
		for _, f := range flatten(e) {
			if !seen[f.Error()] {
				seen[f.Error()] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// propertyFlag is a property's flag: its text, read with the property's
// kind like the file's and the environment's; a boolean's flag alone
// (--watch) means true.
type propertyFlag struct {
	text   string
	isBool bool
}

func (f *propertyFlag) String() string     { return f.text }
func (f *propertyFlag) Set(v string) error { f.text = v; return nil }
func (f *propertyFlag) IsBoolFlag() bool   { return f.isBool }
