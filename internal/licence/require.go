package licence

import (
	"errors"
	"fmt"
	"time"
)

// WarnBefore is how long before its expiry [ExpiryWarning] starts to warn
// about a key.
const WarnBefore = 14 * 24 * time.Hour

// Require is the start-up check: it verifies key against keys at now for
// the paid features wanted (the features switched on).
//
// With features wanted, each that the key does not entitle is one line of
// the error, an [*Error] whose Feature is set ("learning-mode is a paid
// feature: licence key expired on 2026-01-31"), joined with [errors.Join]
// in the order of features. With none wanted, a missing key is fine (nil,
// nil) and a given key that does not verify is the error of [Verify], for
// the caller to report as a warning.
//
// The licence is returned whenever the key verified, even when it does not
// entitle every feature wanted.
func Require(key string, keys Keyring, now time.Time, features []string) (*Licence, error) {
	l, err := Verify(key, keys, now)
	if len(features) == 0 {
		var e *Error
		if errors.As(err, &e) && e.Reason == Missing {
			return nil, nil
		}
		return l, err
	}
	errs := make([]error, 0, len(features))
	for _, f := range features {
		switch {
		case err != nil:
			var e *Error
			if !errors.As(err, &e) {
				errs = append(errs, fmt.Errorf("%s is a paid feature: %w", f, err))
				continue
			}
			c := *e
			c.Feature = f
			errs = append(errs, &c)
		case !l.Entitles(f):
			errs = append(errs, &Error{Reason: NotEntitled, Feature: f, KeyID: l.KeyID,
				msg: fmt.Sprintf("licence key for %q covers %s, not %s", l.Licensee, list(l.Features), f)})
		}
	}
	return l, errors.Join(errs...)
}

// ExpiryWarning returns the line to log about l's expiry at now: "" unless
// it expires within [WarnBefore]. A key that expired while the service ran
// gets a line too: its features stay on until the service restarts, and
// the start after that fails.
func ExpiryWarning(l *Licence, now time.Time) string {
	if l == nil {
		return ""
	}
	left := l.Expires.Sub(now)
	date := l.Expires.Format(dateLayout)
	switch {
	case left > WarnBefore:
		return ""
	case left < 0:
		return fmt.Sprintf("licence key for %q expired on %s: %s stay on until this service restarts, and a start after that fails", l.Licensee, date, list(l.Features))
	}
	const day = 24 * time.Hour
	in := "today"
	switch days := (left + day - 1) / day; days {
	case 0:
	case 1:
		in = "in 1 day"
	default:
		in = fmt.Sprintf("in %d days", days)
	}
	return fmt.Sprintf("licence key for %q expires on %s, %s: renew it, or a start after that fails for %s", l.Licensee, date, in, list(l.Features))
}
