package sink

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/contractguard/contractguard/internal/taint"
)

// Resolver looks up a host's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DialFunc dials an address ("ip:port"); net.Dialer.DialContext is one.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// TransportOption configures Transport.
type TransportOption func(*transport)

// AllowHosts lets input choose these hosts: a name ("api.partner.example",
// matched without regard to case), a pattern for its subdomains
// ("*.partner.example"), an address or a network in CIDR notation
// ("10.1.2.0/24", which lets input reach those addresses). Where an
// allowed host that input chose redirects is checked as any redirect.
func AllowHosts(hosts ...string) TransportOption {
	return func(t *transport) {
		for _, h := range hosts {
			if p, err := netip.ParsePrefix(h); err == nil {
				t.allowNets = append(t.allowNets, p.Masked())
				continue
			}
			if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
				t.allowNets = append(t.allowNets, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			t.allowHosts = append(t.allowHosts, strings.TrimSuffix(strings.ToLower(h), "."))
		}
	}
}

// WithResolver sets how the transport looks up a host that came from
// input (net.DefaultResolver otherwise).
func WithResolver(r Resolver) TransportOption { return func(t *transport) { t.resolver = r } }

// WithDialer sets how the transport dials the address it checked (the base
// *http.Transport's DialContext, or its Dial, or a net.Dialer, otherwise).
func WithDialer(dial DialFunc) TransportOption { return func(t *transport) { t.dial = dial } }

// Transport returns base (http.DefaultTransport when nil) checking outbound
// requests against server-side request forgery: when a request's host came
// from the input ctx carries — an input is the host, or holds it where a URL
// does (`http://HOST:port/…`, `user@HOST`), in any case, with or without the
// dot that ends a fully qualified name (`HOST.`); or the host is not ASCII
// (net/http maps it by IDNA before it dials) and an input holds other than
// ASCII or a "%" — or the request follows a redirect from one that did, the
// host is resolved, every address is checked, and the connection is made to
// the address that was checked, so that a name resolving to a public address
// first and to 127.0.0.1 next (DNS rebinding) does not get through.
// Loopback, private (RFC 1918), shared (100.64.0.0/10), link-local
// (169.254.0.0/16, fe80::/10), unique-local (fc00::/7), the unspecified
// address, multicast and reserved ones, and the cloud metadata services
// (169.254.169.254, fd00:ec2::254, metadata.google.internal …) are blocked,
// in any spelling: [::ffff:127.0.0.1], 2130706433, 0x7f000001, 0177.0.0.1,
// 127.1, and IPv4 inside NAT64, 6to4 and Teredo addresses. Requests whose
// host did not come from input, and hosts AllowHosts names, go through base
// as they are.
//
// The dial-time check needs base to be an *http.Transport (the usual case):
// its requests with input hosts go through a clone of it whose dialer
// checks. With any other RoundTripper, or through a proxy, the host is
// resolved and checked before the request, and the connection is left to
// base: a rebinding between the two is not seen.
//
//	client := &http.Client{Transport: sink.Transport(nil)}
//	resp, err := client.Do(req.WithContext(r.Context()))
func Transport(base http.RoundTripper, opts ...TransportOption) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	t := &transport{base: base}
	for _, o := range opts {
		o(t)
	}
	if t.resolver == nil {
		t.resolver = net.DefaultResolver
	}
	if ht, ok := base.(*http.Transport); ok {
		g := ht.Clone()
		dial := t.dial
		if dial == nil {
			dial = ht.DialContext
		}
		if dial == nil && ht.Dial != nil {
			old := ht.Dial // the base's own dial, before DialContext was
			dial = func(_ context.Context, network, addr string) (net.Conn, error) { return old(network, addr) }
		}
		if dial == nil {
			dial = (&net.Dialer{Timeout: defaultDialTimeout, KeepAlive: defaultDialTimeout}).DialContext
		}
		t.dial = dial
		g.DialContext = t.checkedDial
		tls := ht.DialTLSContext
		if tls == nil && ht.DialTLS != nil {
			old := ht.DialTLS
			tls = func(_ context.Context, network, addr string) (net.Conn, error) { return old(network, addr) }
		}
		if tls != nil {
			// The application's own TLS dial: checked before, not at, the dial.
			g.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				di, _ := ctx.Value(dialInfoKey{}).(*dialInfo)
				if _, err := t.resolveChecked(ctx, di, network, addr); err != nil {
					return nil, err
				}
				return tls(ctx, network, addr)
			}
			g.DialTLS = nil
		}
		t.proxy = ht.Proxy
		t.checked = g
	}
	return t
}

const defaultDialTimeout = 30 * time.Second // http.DefaultTransport's

type transport struct {
	base       http.RoundTripper
	checked    *http.Transport // base's clone with the checking dialer; nil when base is no *http.Transport
	proxy      func(*http.Request) (*url.URL, error)
	resolver   Resolver
	dial       DialFunc
	allowHosts []string
	allowNets  []netip.Prefix
	// starts are the bytes other than "@" and "[" (and "//") that may stand
	// before a host in an input: CheckURL's for a URL whose host only a
	// WHATWG client reads ("http:\\HOST\", "http:/HOST", "http:HOST").
	starts string
}

// dialInfo rides in a checked request's context to its dial.
type dialInfo struct {
	r  *taint.Request
	in taint.Input
}

type dialInfoKey struct{}

// blockedDial is a dial refused: RoundTrip makes it a BlockedError for the
// request it serves.
type blockedDial struct{ reason string }

func (e *blockedDial) Error() string { return "sink: dial blocked: host is " + e.reason }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := request(req.Context())
	if r == nil {
		return t.base.RoundTrip(req)
	}
	if ok, err := tooLarge(r, sinkHTTP); ok {
		if err != nil {
			return nil, err
		}
		return t.base.RoundTrip(req) // report-only: reported, and made
	}
	if req.URL == nil {
		// A request no client sends (http.Client refuses it first):
		// refused here as net/http's transport refuses it, not read.
		return nil, errors.New("sink: nil Request.URL")
	}
	in, tainted := t.taintedHost(r, req)
	if !tainted {
		return t.base.RoundTrip(req)
	}
	host := strings.TrimSuffix(strings.ToLower(req.URL.Hostname()), ".")
	if metadataHosts[host] {
		if err := block(r, sinkHTTP, in, "points the request at cloud metadata"); err != nil {
			return nil, err
		}
		return t.base.RoundTrip(req)
	}
	di := &dialInfo{r, in}
	if r.ReportOnly || t.checked == nil || t.viaProxy(req) {
		// No dial of ours, or nothing to stop (report-only: a request may go
		// over a kept-alive connection that no dial would see): check now,
		// and leave the dial to base. In report-only mode a lookup that
		// fails here is base's to meet.
		if _, err := t.resolveChecked(req.Context(), di, "tcp", net.JoinHostPort(req.URL.Hostname(), "0")); err != nil && !r.ReportOnly {
			return nil, t.blocked(r, in, err)
		}
		return t.base.RoundTrip(req)
	}
	ctx := context.WithValue(req.Context(), dialInfoKey{}, di)
	resp, err := t.checked.RoundTrip(req.WithContext(ctx))
	if err != nil {
		return nil, t.blocked(r, in, err)
	}
	return resp, nil
}

// viaProxy: base sends req through a proxy, so the dial is the proxy's.
func (t *transport) viaProxy(req *http.Request) bool {
	if t.proxy == nil {
		return false
	}
	u, err := t.proxy(req)
	return err == nil && u != nil
}

// CloseIdleConnections closes the idle connections of base and of its
// checking clone.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	if t.checked != nil {
		t.checked.CloseIdleConnections()
	}
}

// blocked turns a refused dial into the request's BlockedError, reported;
// other errors pass as they are.
func (t *transport) blocked(r *taint.Request, in taint.Input, err error) error {
	var bd *blockedDial
	if !errors.As(err, &bd) {
		return err
	}
	if berr := block(r, sinkHTTP, in, "points the request at "+bd.reason); berr != nil {
		return berr
	}
	return err // report-only: the dial let it through, so this is not reached
}

// checkedDial is the clone's dialer: it resolves the host, checks every
// address, and dials the first that answers.
func (t *transport) checkedDial(ctx context.Context, network, addr string) (net.Conn, error) {
	di, _ := ctx.Value(dialInfoKey{}).(*dialInfo)
	ips, err := t.resolveChecked(ctx, di, network, addr)
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	var first error
	for _, ip := range ips {
		c, err := t.dial(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// resolveChecked resolves addr's host (an address in any spelling is not
// looked up) and checks each address. A refusal is a *blockedDial, unless
// di's request is in report-only mode: then it is reported and let
// through. Without di (a dial the transport cannot tell the request of)
// it refuses.
func (t *transport) resolveChecked(ctx context.Context, di *dialInfo, network, addr string) ([]netip.Addr, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, ok := parseHost(host); ok {
		ips = []netip.Addr{ip}
	} else {
		ipnet := "ip"
		switch network {
		case "tcp4", "udp4":
			ipnet = "ip4"
		case "tcp6", "udp6":
			ipnet = "ip6"
		}
		ips, err = t.resolver.LookupNetIP(ctx, ipnet, host)
		if err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			// A Resolver of the application's that finds nothing and says
			// nothing wrong: no address was checked, and a dial by the name
			// (the base RoundTripper's) would look it up again.
			return nil, &net.AddrError{Err: "no addresses", Addr: addr}
		}
	}
	reported := false // report-only: the call is reported for each address
	for _, ip := range ips {
		if t.allowedAddr(ip) {
			continue
		}
		if why := internalReason(ip); why != "" {
			if di != nil && di.r.ReportOnly {
				blockAgain(di.r, sinkHTTP, di.in, "points the request at "+why, reported)
				reported = true
				continue
			}
			return nil, &blockedDial{reason: why}
		}
	}
	return ips, nil
}

func (t *transport) allowedAddr(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	for _, p := range t.allowNets {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

func (t *transport) allowedHost(host string) bool {
	for _, h := range t.allowHosts {
		if h == host || strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:]) {
			return true
		}
	}
	return false
}

// maxHops is how many requests of a chain of redirects taintedHost looks
// at, the request itself included.
const maxHops = 32

// taintedHost finds the input the request's host came from: of the request,
// or of a request of the redirects that led to it (one whose host
// AllowHosts names too), unless the request's own host is one AllowHosts
// names, which input may choose however it led there. A chain longer
// than maxHops (a client whose CheckRedirect follows more than 31
// redirects) is taken for one whose first host came from input, with no
// input named: the hop that came from one may lie beyond what is looked at.
func (t *transport) taintedHost(r *taint.Request, req *http.Request) (taint.Input, bool) {
	for hop, n := req, 0; hop != nil; n++ {
		if n == maxHops {
			return taint.Input{}, true
		}
		name := ""
		if hop.URL != nil { // an earlier request of a chain made by hand may have none
			name = hop.URL.Hostname()
		}
		host := strings.TrimSuffix(strings.ToLower(name), ".")
		if i := strings.IndexByte(host, '%'); i >= 0 && strings.IndexByte(host, ':') >= 0 {
			host = host[:i] // an IPv6 zone, written %25 in a URL
		}
		// AllowHosts lets input choose a host, not where that host
		// redirects: when this request's host is not allowed, an allowed
		// host of the requests before it that came from input counts as any
		// other. (A redirect to an allowed host is one input may choose.)
		allowed := t.allowedHost(host)
		if n == 0 && allowed && host != "" {
			// Input may choose this host, so it may lead here by a
			// redirect from wherever it began.
			return taint.Input{}, false
		}
		if host != "" { // not allowed, or a hop before: see above
			if in, ok := inputWithHost(r, host, portOf(hop.URL), t.starts); ok {
				return in, true
			}
			if !isASCII(name) || strings.IndexByte(host, '%') >= 0 {
				// net/http dials such a name mapped by IDNA (ＬＯＣＡＬＨＯＳＴ,
				// LOCALHOS%EF%BC%B4, localhoſt: localhost), which the finder
				// does not follow: it is input's if any input could write it.
				// So is a name with a "%" (%25 in the URL) that is no IPv6
				// zone: "%25x.evil.example" is "%x.evil.example", which a
				// resolver that does not refuse it looks up.
				if in, ok := inputNotASCII(r); ok {
					return in, true
				}
			}
		}
		if hop.Response == nil {
			break
		}
		hop = hop.Response.Request
	}
	return taint.Input{}, false
}

// inputWithHost is an input that is host, or holds it where a URL holds
// a host: after "//", "@" or "[" (or at the start), before ":", "/", "?",
// "#", "]", "%" (an IPv6 zone) or "\\" (or at the end), and after "//"
// before any byte no host holds (a URL in text: "see http://HOST now").
// The dots that end a fully qualified name ("localhost.", which resolves
// as localhost) are the host's, which comes without them. A host named in prose ("ask
// localhost's admin") or inside a longer name (db in feedback, in
// db.example) is not the input's doing. The request's own Host header
// counts only with the port too (port is the URL's, or its scheme's
// default): the service calling a neighbour on its own host (a sidecar on
// 127.0.0.1:9901 while it serves 127.0.0.1:8080) is not the client's
// choice, while a URL built from the Host header is.
func inputWithHost(r *taint.Request, host, port, starts string) (taint.Input, bool) {
	var found taint.Input
	ok := false
	holds := func(in taint.Input, v string) bool {
		if len(v) < len(host) {
			// Nor do its otherCases hold it: case mapping goes rune for
			// rune, so an ASCII host in one took as many bytes of v or
			// more, and a host of other than ASCII is inputNotASCII's.
			return false
		}
		if in.Source == taint.Header && in.Name == "Host" && !samePort(v, port) {
			return false
		}
		return holdsHostAfter(v, host, starts) || !isASCII(v) && otherCasesHoldHost(v, host, starts)
	}
	r.Inputs(func(in taint.Input) bool {
		v := trimSpace(in.Value)
		// Trimmed as most runtimes trim too ("\u00a0169.254.169.254").
		if w := trimAnySpace(v); holds(in, v) || len(w) < len(v) && holds(in, w) {
			found, ok = in, true
			return false
		}
		return true
	})
	return found, ok
}

// otherCasesHoldHost: one of the otherCases of input v holds host.
func otherCasesHoldHost(v, host, starts string) bool {
	forms, n := otherCases(v)
	for _, w := range forms[:n] {
		if holdsHostAfter(w, host, starts) {
			return true
		}
	}
	return false
}

// holdsHost: v is host, or holds it where a URL holds a host, as
// inputWithHost says.
func holdsHost(v, host string) bool { return holdsHostAfter(v, host, "") }

// holdsHostAfter is holdsHost where a byte of starts may also stand
// before the host.
func holdsHostAfter(v, host, starts string) bool {
	work := 0 // the bytes of host compared at the places looked at
	var m *foldSearch
	for from := 0; ; {
		var i int
		if m == nil {
			// The first place by indexFold, which does not allocate; the
			// others by one search that goes on where it stopped: each
			// indexFold from the place after the last may compare for up
			// to 8 bytes a byte of what is left, again at each place.
			if i = indexFold(v[from:], host); i >= 0 {
				i += from
			}
		} else {
			i, from = m.next(v, from)
		}
		if i < 0 {
			return false
		}
		j := i + len(host)
		for j < len(v) && v[j] == '.' {
			j++ // the root of a fully qualified name: "localhost." is localhost
		}
		before := i == 0 || v[i-1] == '@' || v[i-1] == '[' || i >= 2 && v[i-2:i] == "//" ||
			strings.IndexByte(starts, v[i-1]) >= 0
		after := j == len(v) || strings.IndexByte(":/?#]%\\", v[j]) >= 0 ||
			!hostByte(v[j]) && inAuthority(v, i)
		if before && after {
			return true
		}
		if work += len(host); work > 8*len(v)+4096 {
			// Places that overlap over and over (a host "aaa…a" in an input
			// "aaa…"), each compared in full: taken as held, so that the
			// host is checked, rather than compared again at each byte.
			return true
		}
		if m == nil {
			m, from = newFoldSearch(host), i+1 // a fresh search from the byte after the place
		}
	}
}

// inAuthority: the host at v[i] follows "//", or the userinfo of "//…@":
// it is a URL's, wherever the URL ends. An application that finds a URL
// in text ends it at the first byte that no URL's host holds ("see
// http://HOST now", "(http://HOST)", "<a href="http://HOST">").
func inAuthority(v string, i int) bool {
	if i >= 2 && v[i-2:i] == "//" {
		return true
	}
	if i == 0 || v[i-1] != '@' {
		return false
	}
	// Back over the userinfo, which holds no '/', '@', '?', '#' or blank:
	// each look stops at the '@' before, so a long run of them is read
	// once, not once per '@'.
	for k := i - 2; k >= 0; k-- {
		switch c := v[k]; {
		case c == '/':
			return k >= 1 && v[k-1] == '/'
		case c == '@' || c == '?' || c == '#' || c <= ' ':
			return false
		}
	}
	return false
}

// hostByte: c may go on with a host name (a byte of other than ASCII
// too: net/http maps such a name by IDNA).
func hostByte(c byte) bool {
	return c == '-' || c == '_' || c == '~' || isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'z') || c >= 0x80
}

// inputNotASCII is the first input that holds a byte of other than ASCII
// or a "%" (a URL's host may escape such bytes, and only those), the
// input a host of other than ASCII is counted as coming from.
func inputNotASCII(r *taint.Request) (taint.Input, bool) {
	var found taint.Input
	ok := false
	r.Inputs(func(in taint.Input) bool {
		if !isASCII(in.Value) || strings.IndexByte(in.Value, '%') >= 0 {
			found, ok = in, true
			return false
		}
		return true
	})
	return found, ok
}

// portOf is u's port, or its scheme's default ("" for another scheme).
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}

// samePort reports whether a Host header (host or host:port) names port:
// without a port of its own, it is the default port of either scheme.
func samePort(hostHeader, port string) bool {
	_, p, err := net.SplitHostPort(hostHeader)
	if err != nil { // no port
		return port == "80" || port == "443" || port == ""
	}
	return p == port
}

// CheckURL checks a URL the application is about to fetch with a client
// other than one built on Transport: when its host came from the input ctx
// carries, the host is resolved (with net.DefaultResolver) and each address
// is checked as Transport checks them. Where url.Parse reads no host, the
// host browsers and the other clients of the WHATWG URL standard read is
// the one checked ("http:\\HOST\", "http:/HOST" and "http:HOST" go to
// HOST, and so does a reference "/\HOST/" or "\\HOST\", which is "//HOST/"
// resolved against an http(s) page). The fetch resolves the name again: a rebinding between the two
// is not seen, which Transport's dial-time check does see. Nor are the
// redirects the other client follows: check each one, or follow none.
func CheckURL(ctx context.Context, rawURL string) error {
	r := request(ctx)
	if r == nil {
		return nil
	}
	if ok, err := tooLarge(r, sinkHTTP); ok {
		return err
	}
	t := &transport{resolver: net.DefaultResolver}
	escaped := false // the host read as WHATWG reads it was percent-encoded
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	if after, ok := hostAfter(u, rawURL); ok {
		// url.Parse reads no host where a client of the WHATWG URL standard
		// (browsers, Node's fetch, headless renderers) reads one:
		// http:\\127.0.0.1\, http:/127.0.0.1, http:127.0.0.1, and
		// resolved against an http(s) page, /\127.0.0.1/ as //127.0.0.1/.
		raw, host, err := hostAsWHATWG(after)
		if err != nil {
			return err
		}
		escaped = strings.IndexByte(raw, '%') >= 0
		u = &url.URL{Scheme: u.Scheme, Host: host}
		t.starts = `:/\`
	}
	req := &http.Request{URL: u}
	in, tainted := t.taintedHost(r, req)
	if !tainted && escaped {
		// Decoded, it is input's if any input could have written it, as a
		// host of other than ASCII is.
		in, tainted = inputNotASCII(r)
	}
	if !tainted {
		return nil
	}
	if metadataHosts[strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")] {
		return block(r, sinkHTTP, in, "points the request at cloud metadata")
	}
	if _, err := t.resolveChecked(ctx, &dialInfo{r, in}, "tcp", net.JoinHostPort(u.Hostname(), "0")); err != nil {
		return t.blocked(r, in, err)
	}
	return nil
}

// specialScheme: the WHATWG URL standard's schemes whose URLs have a host
// however many slashes, or backslashes, come after the colon.
func specialScheme(scheme string) bool {
	switch scheme { // url.Parse lower-cases it
	case "http", "https", "ws", "wss", "ftp":
		return true
	}
	return false
}

// hostAfter is what follows the scheme's colon in rawURL (u as url.Parse
// read it) where url.Parse reads no host and a WHATWG client reads one: a
// URL of a special scheme, or a reference that starts with two slashes or
// backslashes, one a backslash at least ("\\HOST\", "/\HOST", which a
// client resolves against an http(s) page as "//HOST"; url.Parse reads
// "//HOST" itself), after the spaces WHATWG trims.
func hostAfter(u *url.URL, rawURL string) (string, bool) {
	if u.Host != "" {
		return "", false
	}
	if specialScheme(u.Scheme) {
		_, rest, _ := strings.Cut(rawURL, ":")
		return rest, true
	}
	s := strings.TrimLeft(rawURL, " ")
	if u.Scheme == "" && len(s) >= 2 && (s[0] == '/' || s[0] == '\\') && (s[1] == '/' || s[1] == '\\') {
		return s, true
	}
	return "", false
}

// hostAsWHATWG is the host, with its port, that the WHATWG URL standard
// reads in rest, what follows a special scheme's colon: after any slashes
// and backslashes, up to the next slash, backslash, "?" or "#", after the
// last "@" (raw), and percent-decoded (host).
func hostAsWHATWG(rest string) (raw, host string, err error) {
	rest = strings.TrimLeft(rest, `/\`)
	if i := strings.IndexAny(rest, `/\?#`); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	host, err = url.PathUnescape(rest)
	return rest, host, err
}
