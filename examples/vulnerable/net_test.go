package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// testNet is the outbound network the fetch handler sees in the tests: a
// resolver in memory and a dialer that takes an address to a test server,
// all of them on this machine's loopback.
//
//   - internal: the SSRF target, listening on 127.0.0.1 and [::1] with one
//     port; every hit is counted.
//   - metadata: a cloud metadata service, dialled for 169.254.169.254,
//     fd00:ec2::254 and 100.100.100.200; counted.
//   - intranet: the private ranges (10/8, 172.16/12, 192.168/16, 100.64/10,
//     fc00::/7) but the partner's; counted.
//   - partner: 10.20.0.0/16, the one private network the application allows
//     (Config.AllowHosts).
//   - public: the documentation ranges (192.0.2/24, 198.51.100/24,
//     203.0.113/24, 2001:db8::/32), where public-looking names resolve. Its
//     /go answers a redirect to the internal server.
//
// Loopback addresses in any form are dialled for real, as a Go program's
// dial would; any other address is unreachable. Names resolve only
// through the table: a spelling Go does not read as an address
// (2130706433, 0x7f.1, 127.1) is looked up as a name, as Go's resolver
// would, and is not found.
type testNet struct {
	internal, metadata, intranet, partner, public *httptest.Server
	internal6                                     *http.Server
	port                                          string // the internal server's port, on both families

	hits  atomic.Int64 // requests the internal, metadata and intranet servers received
	names map[string][]netip.Addr
}

func newTestNet(t *testing.T) *testNet {
	n := &testNet{}
	count := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.hits.Add(1)
			fmt.Fprintf(w, "CANARY-%s-SECRET %s", name, r.URL.Path)
		})
	}
	// The internal server, on [::1] and on 127.0.0.1 with the same port.
	l6, err := net.Listen("tcp", "[::1]:0")
	require.NoError(t, err, "IPv6 loopback")
	_, n.port, _ = net.SplitHostPort(l6.Addr().String())
	l4, err := net.Listen("tcp", "127.0.0.1:"+n.port)
	require.NoError(t, err)
	n.internal = httptest.NewUnstartedServer(count("INTERNAL"))
	n.internal.Listener.Close()
	n.internal.Listener = l4
	n.internal.Start()
	n.internal6 = &http.Server{Handler: count("INTERNAL")}
	go n.internal6.Serve(l6)
	n.metadata = httptest.NewServer(count("METADATA"))
	n.intranet = httptest.NewServer(count("INTRANET"))
	n.partner = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "partner %s %s", r.Host, r.URL.Path)
	}))
	n.public = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			http.Redirect(w, r, "http://127.0.0.1:"+n.port+"/admin", http.StatusFound)
			return
		}
		fmt.Fprintf(w, "public %s %s", r.Host, r.URL.Path)
	}))
	t.Cleanup(func() {
		n.internal.Close()
		n.internal6.Close()
		n.metadata.Close()
		n.intranet.Close()
		n.partner.Close()
		n.public.Close()
	})
	a := netip.MustParseAddr
	n.names = map[string][]netip.Addr{
		"localhost":                  {a("127.0.0.1"), a("::1")},
		"api.partner.example":        {a("192.0.2.10")},
		"cdn.example.org":            {a("198.51.100.7")},
		"v6.example.net":             {a("2001:db8::10")},
		"redirect.example.com":       {a("192.0.2.20")},
		"inventory.internal.example": {a("10.20.0.5")},
		"internal.attacker.example":  {a("127.0.0.1")},
		"metadata.google.internal":   {a("169.254.169.254")},
		"wiki.corp.example":          {a("192.168.10.10")},
	}
	return n
}

// LookupNetIP resolves host from the table (sink.Resolver).
func (n *testNet) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, ip := range n.names[strings.TrimSuffix(strings.ToLower(host), ".")] {
		if network == "ip" || network == "ip4" && ip.Is4() || network == "ip6" && ip.Is6() {
			out = append(out, ip)
		}
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

var (
	metadataAddrs = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200")}
	partnerNet    = netip.MustParsePrefix("10.20.0.0/16")
	intranetNets  = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("fc00::/7")}
	publicNets = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("2001:db8::/32")}
)

func inAny(ip netip.Addr, nets []netip.Prefix) bool {
	for _, p := range nets {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Dial takes addr ("host:port", a name resolved through the table) to the
// test server that stands for it (sink.DialFunc).
func (n *testNet) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		ips, err := n.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		ip = ips[0]
	}
	var d net.Dialer
	u := ip.Unmap()
	server := func(s *httptest.Server) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", s.Listener.Addr().String())
	}
	switch {
	case u.IsLoopback() || u.IsUnspecified():
		return d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port)) // for real
	case slices.Contains(metadataAddrs, u):
		return server(n.metadata)
	case partnerNet.Contains(u):
		return server(n.partner)
	case inAny(u, intranetNets):
		return server(n.intranet)
	case inAny(u, publicNets):
		return server(n.public)
	}
	return nil, errors.New("test network: " + addr + " is unreachable")
}
