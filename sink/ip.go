package sink

import (
	"net/netip"
	"strconv"
	"strings"
)

// parseHost reads a URL host as an address: an IP in any spelling a
// resolver accepts — IPv6 in brackets or not, with a zone, IPv4 as
// inet_aton reads it (2130706433, 0x7f000001, 0177.0.0.1, 127.1) — or not
// an address at all.
func parseHost(host string) (netip.Addr, bool) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i]
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true
	}
	return parseIPv4Loose(host)
}

// parseIPv4Loose reads inet_aton's forms: one to four parts, each decimal,
// 0x hexadecimal or 0 octal, the last filling the bytes left.
func parseIPv4Loose(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 64 {
		return netip.Addr{}, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals [4]uint64
	for i, p := range parts {
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	n := len(parts)
	var ip uint64
	for i := 0; i < n-1; i++ {
		if vals[i] > 255 {
			return netip.Addr{}, false
		}
		ip |= vals[i] << (24 - 8*i)
	}
	last := vals[n-1]
	if last >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	}
	ip |= last
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

type ipRange struct {
	p      netip.Prefix
	reason string
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// The addresses a request whose host came from input may not reach. The
// documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
// 2001:db8::/32) are not among them: nothing routes them, so blocking them
// protects nothing, and tests resolve names to them.
var (
	metadata = []ipRange{
		{mustPrefix("169.254.169.254/32"), "cloud metadata"},
		{mustPrefix("169.254.170.2/32"), "cloud metadata"},   // ECS task metadata
		{mustPrefix("169.254.170.23/32"), "cloud metadata"},  // EKS pod identity
		{mustPrefix("100.100.100.200/32"), "cloud metadata"}, // Alibaba
		{mustPrefix("192.0.0.192/32"), "cloud metadata"},     // Oracle
		{mustPrefix("fd00:ec2::254/128"), "cloud metadata"},  // AWS over IPv6
		{mustPrefix("fd00:ec2::23/128"), "cloud metadata"},
	}
	private4 = []ipRange{
		{mustPrefix("0.0.0.0/8"), "an unspecified (this-network) address"},
		{mustPrefix("10.0.0.0/8"), "a private address"},
		{mustPrefix("100.64.0.0/10"), "a shared (CGNAT) address"},
		{mustPrefix("127.0.0.0/8"), "a loopback address"},
		{mustPrefix("169.254.0.0/16"), "a link-local address"},
		{mustPrefix("172.16.0.0/12"), "a private address"},
		{mustPrefix("192.0.0.0/24"), "an IETF protocol address"},
		{mustPrefix("192.168.0.0/16"), "a private address"},
		{mustPrefix("198.18.0.0/15"), "a benchmarking address"},
		{mustPrefix("224.0.0.0/4"), "a multicast address"},
		{mustPrefix("240.0.0.0/4"), "a reserved address"},
	}
	private6 = []ipRange{
		{mustPrefix("::/128"), "the unspecified address"},
		{mustPrefix("::1/128"), "a loopback address"},
		{mustPrefix("fe80::/10"), "a link-local address"},
		{mustPrefix("fec0::/10"), "a site-local address"},
		{mustPrefix("fc00::/7"), "a unique-local address"},
		{mustPrefix("ff00::/8"), "a multicast address"},
		{mustPrefix("100::/64"), "a discard address"},
		{mustPrefix("64:ff9b:1::/48"), "a local NAT64 address"},
	}
	nat64   = mustPrefix("64:ff9b::/96")
	compat4 = mustPrefix("::/96")
	sixTo4  = mustPrefix("2002::/16")
	teredo  = mustPrefix("2001::/32")
)

// internalReason says what internal kind of address ip is, or "" for a
// public one. IPv6 forms that carry an IPv4 address (mapped, compatible,
// NAT64, 6to4, Teredo) are judged by it.
func internalReason(ip netip.Addr) string {
	ip = ip.WithZone("")
	for _, r := range metadata {
		if r.p.Contains(ip) {
			return r.reason
		}
	}
	if ip.Is4In6() {
		return internalReason(ip.Unmap())
	}
	if ip.Is4() {
		for _, r := range private4 {
			if r.p.Contains(ip) {
				return r.reason
			}
		}
		if ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
			return "the broadcast address"
		}
		return ""
	}
	for _, r := range private6 {
		if r.p.Contains(ip) {
			return r.reason
		}
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip), compat4.Contains(ip):
		return internalReason(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixTo4.Contains(ip):
		return internalReason(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	case teredo.Contains(ip):
		if r := internalReason(netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]})); r != "" {
			return r // the Teredo server
		}
		return internalReason(netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})) // the client, obfuscated
	}
	return ""
}

// metadataHosts are the names of cloud metadata services.
var metadataHosts = map[string]bool{
	"metadata.google.internal": true, "metadata.goog": true, "metadata": true,
	"instance-data": true, "instance-data.ec2.internal": true, "metadata.azure.internal": true,
}
