package cgprometheus

// SetMaxSeries lowers c's bound on label sets, so that a test reaches it.
func SetMaxSeries(c *Collector, n int) { c.max = n }
