package notify

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/nicholas-fedor/shoutrrr/pkg/router"

	"github.com/sniped/sniped/internal/store"
)

// MaxURLLen bounds a target URL.
const MaxURLLen = 2000

// ErrPrivateTarget: the target is on a loopback, private or link-local
// address and this server does not allow those (serve --notify-private).
var ErrPrivateTarget = errors.New("targets on loopback, private or link-local addresses are not allowed on this server")

// Target is a validated notification URL.
type Target struct {
	Kind   store.NotifierKind
	URL    string
	Masked string
}

// ParseTarget validates a notification URL. Plain http(s) URLs are signed
// webhooks; any other scheme must be a service shoutrrr knows. When
// allowPrivate is false, hosts that are loopback, private or link-local
// IP addresses (or "localhost") are refused here; for webhooks the same
// rule is enforced again on every connection, after DNS resolution.
func ParseTarget(raw string, allowPrivate bool) (Target, error) {
	if !utf8.ValidString(raw) || strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Target{}, errors.New("must be a URL without control characters")
	}
	if len(raw) > MaxURLLen {
		return Target{}, fmt.Errorf("must be at most %d characters (got %d)", MaxURLLen, len(raw))
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return Target{}, errors.New("must be an absolute URL such as https://example.com/hook or a notification service URL such as ntfy://ntfy.sh/topic")
	}
	scheme := strings.ToLower(u.Scheme)
	webhook := scheme == "http" || scheme == "https"
	t := Target{URL: raw, Masked: mask(u, webhook)}
	if webhook {
		t.Kind = store.KindWebhook
	} else {
		t.Kind = store.KindShoutrrr
		var sr router.ServiceRouter
		if _, err := sr.Locate(raw); err != nil {
			return Target{}, fmt.Errorf("must be an http(s) webhook or a supported notification service URL (see https://shoutrrr.nickfedor.com/services/overview/): %s", shoutrrrReason(err))
		}
	}
	if !allowPrivate && privateHost(u.Hostname()) {
		return Target{}, ErrPrivateTarget
	}
	return t, nil
}

// shoutrrrReason keeps the library's reason but never the URL it quotes.
func shoutrrrReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// mask shows enough of a URL to recognise it and hides what may be a
// credential: the user info and the query always; for a webhook the path
// after its first segment; for a service URL the whole path (an ntfy topic
// or a Gotify token is the secret) and a host that is not a network name
// (Pushover and Slack put keys there).
func mask(u *url.URL, webhook bool) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(u.Scheme) + "://")
	if u.User != nil {
		b.WriteString("***@")
	}
	host := u.Host
	if !webhook && !strings.ContainsAny(host, ".:[") && host != "localhost" {
		host = "***"
	}
	b.WriteString(host)
	path := strings.TrimPrefix(u.EscapedPath(), "/")
	switch {
	case path == "":
	case !webhook:
		b.WriteString("/***")
	default:
		first, rest, _ := strings.Cut(path, "/")
		b.WriteString("/" + first)
		if rest != "" {
			b.WriteString("/***")
		}
	}
	if u.RawQuery != "" {
		b.WriteString("?***")
	}
	return b.String()
}

// privateHost reports whether host names this machine or a private network
// without a DNS lookup: "localhost" names and private IP literals.
func privateHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && privateAddr(ip)
}

// internalPrefixes are ranges that are not public although netip does not
// call them private: "this network" (0.0.0.0/8), carrier-grade NAT
// (100.64.0.0/10: Tailscale addresses, Alibaba Cloud's metadata service at
// 100.100.100.200), IETF protocol assignments, benchmarking, and NAT64 and
// 6to4, which embed an IPv4 address (checked on its own below).
var internalPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// privateAddr: loopback, private (RFC 1918, fc00::/7), link-local,
// unspecified, multicast or other internal addresses, including IPv4
// addresses embedded in NAT64 (64:ff9b::/96) and 6to4 (2002::/16) ones.
func privateAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			return privateAddr(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(ip):
			return privateAddr(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	for _, p := range internalPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast()
}

// webhookClient posts webhooks. Without allowPrivate its dialer refuses
// private addresses after resolution, so a public name that resolves to
// an internal address (or a redirect to one) cannot reach it. Redirects
// are not followed: a webhook answers 2xx or it failed.
func webhookClient(allowPrivate bool, timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: timeout}
	if !allowPrivate {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || privateAddr(ap.Addr()) {
				return ErrPrivateTarget
			}
			return nil
		}
	}
	tr := &http.Transport{
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       time.Minute,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
