package contractguard

import (
	"errors"
	"slices"

	"github.com/contractguard/contractguard/internal/config"
)

// A configuration property: its name under contractguard:, its kind, and
// where it goes in Options.
type configProperty struct {
	name string
	kind config.Kind
	set  func(o *Options, v any)
}

// configProperties are the properties of the contractguard: tree, the
// Spring starter's and the Go library's own. Each can also be set by the
// environment variable envName(name), which wins over the file.
var configProperties = []configProperty{
	{"enabled", config.Bool, func(o *Options, v any) { o.Disabled = !v.(bool) }},
	{"contracts-dir", config.Path, func(o *Options, v any) { o.ContractsDir = v.(string) }},
	{"vulnerability-scan", config.Bool, func(o *Options, v any) { o.VulnerabilityScan = v.(bool) }},
	{"license-key", config.Text, func(o *Options, v any) { o.LicenseKey = v.(string) }},
	{"learning-mode", config.Bool, func(o *Options, v any) { o.LearningMode = v.(bool) }},
	{"learn-sample-rate", config.Fraction, func(o *Options, v any) { o.LearnSampleRate = v.(float64) }},
	{"sink-protection", config.Bool, func(o *Options, v any) { o.SinkProtection = v.(bool) }},
	{"metrics.enabled", config.Bool, func(o *Options, v any) { o.Metrics = v.(bool) }},
	{"max-body-bytes", config.Size, func(o *Options, v any) { o.MaxBodyBytes = v.(int64) }},
	{"require-contract", config.Bool, func(o *Options, v any) { o.RequireContract = v.(bool) }},
	{"max-depth", config.Depth, func(o *Options, v any) { o.MaxDepth = int(v.(int64)) }},
}

// guardTable is configProperties as internal/config reads them.
var guardTable = func() []config.Property {
	t := make([]config.Property, len(configProperties))
	for i, p := range configProperties {
		t[i] = config.Property{Name: p.name, Kind: p.kind}
	}
	return t
}()

// fileTable is what a file's contractguard: tree may hold: the guard's
// properties and contractguard serve's (contractguard.serve.…), which
// LoadConfig checks and leaves to the command: a proxy setting never
// reaches Options.
var fileTable = append(slices.Clip(guardTable), config.Serve...)

// envName is the environment variable of a property:
// metrics.enabled is CONTRACTGUARD_METRICS_ENABLED.
func envName(property string) string { return config.EnvName(property) }

// ConfigError is a problem with the configuration: a property that does
// not exist or has a value of the wrong kind, a placeholder with no value,
// a file that cannot be read. [LoadConfig] and [ConfigFromEnv] return one
// per problem, joined with errors.Join.
type ConfigError struct {
	Where    string // "file:line", the file, or "environment CONTRACTGUARD_…"
	Property string // contractguard.max-body-bytes; "" when the problem is the file
	Err      error  // what is wrong
}

// Error is one line: "contractguard.yaml:7: contractguard.max-body-bytes:
// want a whole number, 0 or more, not "1MB"".
func (e *ConfigError) Error() string {
	return (&config.Error{Where: e.Where, Property: e.Property, Err: e.Err}).Error()
}

// Unwrap returns Err.
func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads the contractguard: tree of a YAML (or JSON) file into
// Options, as the Spring starter reads its properties:
//
//	contractguard:
//	  enabled: true                    # false: requests pass unchecked (Handle still decodes T)
//	  contracts-dir: ./contracts/      # relative to this file
//	  vulnerability-scan: true
//	  license-key: ${CONTRACTGUARD_LICENSE_KEY:}   # empty when unset
//	  learning-mode: false
//	  sink-protection: false
//	  metrics:
//	    enabled: true
//	  max-body-bytes: 1048576
//	  require-contract: false
//	  max-depth: 64
//
// ${NAME} and ${NAME:default} in a value are replaced from the
// environment; every property can also be set by an environment variable
// (CONTRACTGUARD_CONTRACTS_DIR, CONTRACTGUARD_METRICS_ENABLED, …), which
// wins over the file. Keys outside contractguard: are left alone (the file
// may be an application's whole configuration), but a file without that
// key is an error, and so is a property written flat beside it
// (contractguard.max-depth: at the top); an unknown key inside it,
// a value of the wrong kind, or a placeholder without a value is an error,
// a [*ConfigError] naming the file, line and property. Every problem is
// reported, joined with errors.Join. The Options returned are ready for
// [New]; set Logger, User and the like on them first.
//
// The contractguard.serve group holds the settings of the contractguard
// serve command, the validating reverse proxy (docs/proxy.md): LoadConfig
// checks them like any property, so that a typo there is found wherever
// the file is read, and leaves them out of Options.
func LoadConfig(path string) (Options, error) {
	var o Options
	values, problems, err := config.ReadFile(path, fileTable, "")
	if err != nil {
		return o, configError(err)
	}
	errs := make([]error, 0, len(problems))
	for _, e := range problems {
		errs = append(errs, configError(e))
	}
	for _, p := range configProperties {
		if v, ok := values[p.name]; ok {
			p.set(&o, v)
		}
	}
	errs = append(errs, applyEnv(&o)...)
	return o, errors.Join(errs...)
}

// ConfigFromEnv is [LoadConfig] without a file: Options from the
// CONTRACTGUARD_… environment variables alone. A relative
// CONTRACTGUARD_CONTRACTS_DIR is relative to the working directory.
func ConfigFromEnv() (Options, error) {
	var o Options
	return o, errors.Join(applyEnv(&o)...)
}

// applyEnv sets the properties whose environment variables are set.
func applyEnv(o *Options) []error {
	values, problems := config.Env(guardTable)
	errs := make([]error, 0, len(problems))
	for _, e := range problems {
		errs = append(errs, configError(e))
	}
	for _, p := range configProperties {
		if v, ok := values[p.name]; ok {
			p.set(o, v)
		}
	}
	return errs
}

// configError is internal/config's error as the package's own.
func configError(err error) error {
	var ce *config.Error
	if errors.As(err, &ce) {
		return &ConfigError{Where: ce.Where, Property: ce.Property, Err: ce.Err}
	}
	return err
}
