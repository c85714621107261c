package cgotel

// SetMaxSeries lowers the bound on attribute sets of the registrations
// made until restore is called, so that a test reaches it.
func SetMaxSeries(n int) (restore func()) {
	maxSeries = n
	return func() { maxSeries = MaxSeries }
}
