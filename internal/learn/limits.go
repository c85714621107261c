package learn

import "fmt"

// Limits bounds what a Learner keeps and sets the thresholds of inference.
// A zero field means its default; a zero Limits is entirely defaults.
type Limits struct {
	// Routes is the most method+route pairs kept (default 128). Past it,
	// the routes kept are those whose keys hash smallest (see the package
	// documentation), so that the set kept does not depend on arrival order.
	Routes int
	// Properties is the most members of one object observed per sample,
	// and written per object (default 64). A larger object has the members
	// whose names hash smallest observed; the object is then left open.
	Properties int
	// Depth is how deep bodies are observed (default 16): the body is at
	// depth 0; an object or array at Depth is recorded as such, without
	// its contents.
	Depth int
	// EnumValues is the most distinct strings a value may take and still
	// be inferred an enum (default 10): one more, and the candidates of
	// that value are dropped for good.
	EnumValues int
	// EnumMinSamples is the fewest strings a value must have been seen
	// with before it is inferred an enum (default 20).
	EnumMinSamples int
	// StableSamples is the fewest samples of an object before it may be
	// closed with additionalProperties: false (default 10).
	StableSamples int
	// MaxBytes bounds the memory of the learned state, as accounted by the
	// Learner (default 16 MiB; at least Routes × 8 KiB). Each route may
	// use MaxBytes/Routes; past it, the parts of its bodies whose keys come
	// last are dropped (see the package documentation).
	MaxBytes int
	// SampleRate is the share of eligible requests that Sample picks,
	// in (0, 1] (default 0.1; 1 samples every request).
	SampleRate float64
}

// The defaults of Limits.
const (
	DefaultRoutes         = 128
	DefaultProperties     = 64
	DefaultDepth          = 16
	DefaultEnumValues     = 10
	DefaultEnumMinSamples = 20
	DefaultStableSamples  = 10
	DefaultMaxBytes       = 16 << 20
	DefaultSampleRate     = 0.1
)

// The largest Limits an export may carry, so that a document read from a
// file or a URL cannot ask for unbounded memory.
const (
	maxRoutes     = 1 << 16
	maxProperties = 1 << 12
	maxDepth      = 64
	maxEnumValues = 256
	maxMaxBytes   = 4 << 30
	maxThreshold  = 1 << 40

	// minRouteBytes is the least budget of one route: its record and the
	// body's root always fit.
	minRouteBytes = 8 << 10
)

// withDefaults is l with every zero field set to its default and every
// field within range.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d, hi int) {
		if *v <= 0 {
			*v = d
		}
		*v = min(*v, hi)
	}
	def(&l.Routes, DefaultRoutes, maxRoutes)
	def(&l.Properties, DefaultProperties, maxProperties)
	def(&l.Depth, DefaultDepth, maxDepth)
	def(&l.EnumValues, DefaultEnumValues, maxEnumValues)
	def(&l.EnumMinSamples, DefaultEnumMinSamples, maxThreshold)
	def(&l.StableSamples, DefaultStableSamples, maxThreshold)
	def(&l.MaxBytes, DefaultMaxBytes, maxMaxBytes)
	l.MaxBytes = max(l.MaxBytes, l.Routes*minRouteBytes)
	if !(l.SampleRate > 0) { // NaN too
		l.SampleRate = DefaultSampleRate
	}
	l.SampleRate = min(l.SampleRate, 1)
	return l
}

// routeBudget is the bytes one route may use.
func (l Limits) routeBudget() int64 { return int64(l.MaxBytes / l.Routes) }

// meet is the stricter of two sets of limits, field by field: what Merge
// applies when exports were made with different limits.
func meet(a, b Limits) Limits {
	return Limits{
		Routes:         min(a.Routes, b.Routes),
		Properties:     min(a.Properties, b.Properties),
		Depth:          min(a.Depth, b.Depth),
		EnumValues:     min(a.EnumValues, b.EnumValues),
		EnumMinSamples: max(a.EnumMinSamples, b.EnumMinSamples),
		StableSamples:  max(a.StableSamples, b.StableSamples),
		MaxBytes:       min(a.MaxBytes, b.MaxBytes),
		SampleRate:     min(a.SampleRate, b.SampleRate),
	}.withDefaults()
}

func (l Limits) String() string {
	return fmt.Sprintf("routes %d, properties %d, depth %d, enum values %d, enum min samples %d, stable samples %d, max bytes %d, sample rate %g",
		l.Routes, l.Properties, l.Depth, l.EnumValues, l.EnumMinSamples, l.StableSamples, l.MaxBytes, l.SampleRate)
}
