// Package learn learns draft contracts from the requests a guard sees that
// match no contract: per method and route, a draft-07 schema of their
// bodies, with notes on what was inferred and why, written as contract
// files for review.
//
// # Observing
//
// A Learner is shown sampled requests (Sample, then Observe): method, the
// router's pattern when known, the path, the parsed body. Per route it
// keeps a tree of nodes, one per place in the bodies (a member of an
// object, the items of an array, the members whose names look like data),
// each with counts: of each kind of value, of integral and of negative
// numbers, of objects a member was present in; the formats every string
// matched; and for strings, enum candidates (below). Export snapshots it
// as Observations.
//
// # What is inferred (Observations.Contracts)
//
//   - type: every kind seen; a list (a union) only where samples disagree.
//     integer when every number was integral (1.0 and 1e2 are), else number.
//   - minimum: 0 when no number was negative.
//   - format: email, uri, uuid, date, date-time, ipv4 or ipv6, when every
//     string matched it, as the guard checks it (schema.FormatCheck).
//   - enum: when every string of the place is one of at most
//     Limits.EnumValues values, each seen at least revealAt (3) times, over
//     at least Limits.EnumMinSamples strings, under a name that does not
//     look secret, and the place holds only strings.
//   - properties, and required: the members present in every sample.
//   - additionalProperties: false when the shape is stable: at least
//     Limits.StableSamples samples of the object, members seen in only one
//     sample in at most 1% of them (the Good–Turing estimate of the chance
//     that the next sample brings a member never seen), and nothing about
//     the object was cut short by a limit. Members whose names look like
//     data (numbers, uuids, hex, emails; see looksLikeData) are learned as
//     one schema under additionalProperties instead, their names not kept.
//   - items: one schema for every element of every array.
//
// Everything inferred accepts every body it was learned from
// (FuzzObserve holds it to that).
//
// # Routes
//
// The route is the router's pattern when the guard knows it (chi's
// RoutePattern, ServeMux's Request.Pattern), in contract syntax; a
// wildcard's segments, and whole paths without a pattern, are inferred:
// a segment that looks like a value (a number, a uuid, hex with a digit,
// digits with . _ -, 20 bytes or more, or one with % & ' ( ) * + , : = @)
// becomes a parameter named after the segment before it (/users/{userId}).
// Contracts then takes for a parameter a segment at which at least
// collapseMin routes inferred from paths differ, if they average at most
// collapseMaxMean samples each.
//
// # Privacy
//
// No value of a request is kept but enum candidates, and those only in
// the clear once seen revealAt times: a value seen fewer times is kept as
// a share of a threshold secret sharing and a fingerprint (see enum), so
// that neither the learner's memory nor an export holds it. A string is
// never a candidate if it is over 64 bytes, matches a format, looks like a
// token (16 bytes or more with letters and digits), has 10 digits or more
// (a card, account or telephone number), or is under a member
// whose name, or an ancestor's, looks secret (see secretParts and
// secretWords: password, token, secret, key, auth, cookie, session, card,
// pin…). Member names are kept (they are the shape), but not those that
// look like data. Paths are kept as route templates: a path segment that
// does not look like a value is kept as it is until Contracts collapses
// it, so a router pattern is always better.
//
// # Bounds, and merging exactly
//
// Limits bounds the routes (Routes), the members observed per object
// (Properties), the depth (Depth), the candidates per place (EnumValues)
// and the bytes per route (MaxBytes/Routes, each node and candidate
// charged an upper bound of its size). Every bound is chosen so that
// Merge stays exact: what it keeps is a function of the set of requests
// seen, never of their order.
//
//   - Routes and bytes are bottom-k caps: they keep the routes (the nodes)
//     of smallest key, a hash of what they are; a node's key puts its depth
//     first, so a parent is always kept before its children. The threshold
//     of each cap only moves down and is exported, so a route or node kept
//     at the end was kept from its first sighting, its counts complete, and
//     Merge applies the same cap to the union and gets the same set.
//     A node's charge only grows (an enum dropped keeps a full set's
//     charge), which is what makes the bytes cap exact.
//   - Properties and Depth apply to each sample alone: which members of an
//     object are observed depends on that object only (the smallest
//     hashes, members named like data last), so the counts are the same however samples are split.
//   - EnumValues: a place over it drops its candidates for good (a sticky
//     flag), and the union of two places is over exactly when together
//     they saw more distinct candidates.
//
// What a cap drops is counted (Observations.Dropped; members skipped per
// object) and leaves the schema open at that place, never tighter.
// Requests over the caps are the one thing an attacker sending unmatched
// traffic can make the learner do: fill them, as with any bounded learner.
package learn
