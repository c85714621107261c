package contractguard

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
	"weak"

	"github.com/contractguard/contractguard/internal/licence"
)

// The paid tier: Options.LicenseKey, an offline, signed key
// (docs/licensing.md), entitles learning mode and sink protection. It is
// checked once, by New; nothing is ever fetched over the network.

// licenceKeys are the public keys a licence key is verified against: the
// vendor's, built in. Tests trust a key pair of their own by replacing it.
var licenceKeys = licence.BuiltIn

// licenceClock is the time licence keys are checked at; tests replace it.
var licenceClock = time.Now

// LicenseState is what the metrics document says of the licence key in
// force: who it is for, until when, and what it entitles; never the key.
type LicenseState struct {
	Licensee string   `json:"licensee"`
	KeyID    string   `json:"key_id"`
	Expires  string   `json:"expires"` // RFC 3339, UTC
	Features []string `json:"features"`
	// Expired is true once the key has expired while the service ran: the
	// features it entitled stay on until a restart, which fails.
	Expired bool `json:"expired"`
}

// licenceState is a guard's licence: nil when no key was given (or a
// broken one with no paid feature on).
type licenceState struct {
	l *licence.Licence
}

// paidFeatures are the licence's names of the paid features o turns on.
func (o *Options) paidFeatures() []string {
	var fs []string
	if o.LearningMode || o.LearnSampleRate > 0 {
		fs = append(fs, licence.FeatureLearningMode)
	}
	if o.SinkProtection {
		fs = append(fs, licence.FeatureSinkProtection)
	}
	return fs
}

// checkLicence verifies Options.LicenseKey for the paid features that are
// on. A feature the key does not entitle is an error, one line per feature
// saying which and why: a paid feature is never silently off. A key given
// with no paid feature on is checked too, and a broken one logged as a
// warning, so that a team finds out before it needs the key. A key that
// expires within 14 days is warned about now, and again each day until
// the expiry.
func (g *Guard) checkLicence() error {
	now := licenceClock()
	wanted := g.opts.paidFeatures()
	l, err := licence.Require(g.opts.LicenseKey, licenceKeys, now, wanted)
	if !l.Entitles(licence.FeatureLearningMode) {
		// A contract may learn on its own (mode: learn): why it may not.
		_, g.learning = licence.Require(g.opts.LicenseKey, licenceKeys, now, []string{licence.FeatureLearningMode})
	}
	if err != nil && len(wanted) > 0 {
		var lines []error
		for _, e := range splitJoined(err) {
			lines = append(lines, fmt.Errorf("contractguard: %w", e))
		}
		return errors.Join(lines...)
	}
	if err != nil {
		g.log.Warn("contractguard: " + err.Error() + " (no paid feature is on)")
	}
	if l != nil {
		g.licence = &licenceState{l: l}
		g.warnExpiry(now)
	}
	return nil
}

// splitJoined is the errors an errors.Join holds, or err alone.
func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// warnExpiry logs the licence's expiry warning, if it is due at now, and
// sets a timer for the next: daily from 14 days before the expiry, and
// once when it expires, for as long as the guard is in use.
func (g *Guard) warnExpiry(now time.Time) {
	ls := g.licence
	if msg := licence.ExpiryWarning(ls.l, now); msg != "" {
		g.log.Warn("contractguard: "+msg, slog.String("licensee", ls.l.Licensee), slog.Time("expires", ls.l.Expires))
	}
	var next time.Time
	switch start := ls.l.Expires.Add(-licence.WarnBefore); {
	case now.Before(start):
		next = start
	case now.Before(ls.l.Expires):
		next = now.Add(24 * time.Hour)
		if ls.l.Expires.Before(next) {
			next = ls.l.Expires.Add(time.Second) // the moment it has expired
		}
	default:
		return // expired: said once; the features stay until a restart
	}
	// The timer holds the guard weakly: a guard no longer used (or one
	// that New refused after this check) is collected and warns no more.
	w := weak.Make(g)
	time.AfterFunc(next.Sub(now), func() {
		if live := w.Value(); live != nil {
			live.warnExpiry(licenceClock())
		}
	})
}

// licenseState is the licence's part of the metrics document.
func (g *Guard) licenseState() *LicenseState {
	if g.licence == nil {
		return nil
	}
	l := g.licence.l
	return &LicenseState{
		Licensee: l.Licensee,
		KeyID:    l.KeyID,
		Expires:  l.Expires.UTC().Format(time.RFC3339),
		Features: slices.Clone(l.Features),
		Expired:  licenceClock().After(l.Expires),
	}
}
