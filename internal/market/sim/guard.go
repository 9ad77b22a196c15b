package sim

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/sniped/sniped/internal/httperr"
)

// GuardConfig tunes Guard.
type GuardConfig struct {
	// Hosts are extra host names (without port) the control endpoints
	// answer to, e.g. the host of serve's --public-url.
	Hosts []string
	// Logger receives refusals at debug level (default: discarded).
	Logger *slog.Logger
}

// readEndpoints are the control endpoints that only read; they accept
// HEAD. Every other endpoint changes the marketplace and is GET only, so
// that a new endpoint is refused HEAD unless it is listed here.
var readEndpoints = map[string]bool{"item": true}

// Guard protects the keyless /sim/ control endpoints from browsers: a web
// page open on the same machine, or a DNS-rebinding page, could otherwise
// end auctions or inject failures with a simple GET. It refuses, with a
// 403 envelope:
//   - a cross-site request: Sec-Fetch-Site other than same-origin or none,
//     or an Origin whose host is not the request's own Host;
//   - a Host that is not a loopback name (localhost, *.localhost), a
//     loopback address, the address the connection arrived on (the listen
//     address), or one of cfg.Hosts.
//
// It also refuses HEAD on endpoints that change state (405, Allow: GET).
// The pictures under /sim/img/ stay public: item details link to them from
// any page.
func Guard(cfg GuardConfig, next http.Handler) http.Handler {
	hosts := map[string]bool{}
	for _, h := range cfg.Hosts {
		hosts[normHost(h)] = true
	}
	g := &guard{hosts: hosts}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return httperr.Handler(log, func(w http.ResponseWriter, r *http.Request) error {
		name := endpointName(r.URL.Path)
		if strings.HasPrefix(name, "img/") {
			next.ServeHTTP(w, r)
			return nil
		}
		if err := g.check(w, r, name); err != nil {
			return err
		}
		next.ServeHTTP(w, r)
		return nil
	})
}

type guard struct{ hosts map[string]bool }

func (g *guard) check(w http.ResponseWriter, r *http.Request, name string) error {
	if readEndpoints[name] {
		if err := httperr.AllowGet(w, r); err != nil {
			return err
		}
	} else if err := httperr.AllowGetOnly(w, r); err != nil {
		return err
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return forbidden(fmt.Sprintf("the simulator's control endpoints refuse cross-site browser requests (Sec-Fetch-Site: %s); call them from curl or a page served by this server", site))
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
			return forbidden(fmt.Sprintf("the simulator's control endpoints refuse cross-site browser requests (Origin %.100q is not this server); call them from curl or a page served by this server", origin))
		}
	}
	if !g.hostAllowed(r) {
		return forbidden(fmt.Sprintf("the simulator's control endpoints answer only to localhost, a loopback address or the address the server listens on, not Host %.100q (protection against DNS rebinding)", r.Host))
	}
	return nil
}

// hostAllowed reports whether r's Host names this machine: a loopback name
// or address, the local address of the connection, or a configured host.
// An empty Host (HTTP/1.0) cannot come from a browser and is allowed.
func (g *guard) hostAllowed(r *http.Request) bool {
	if r.Host == "" {
		return true
	}
	host := normHost(r.Host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || g.hosts[host] {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if tcp, ok := la.(*net.TCPAddr); ok && tcp.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// normHost is a Host header's name without port, brackets or trailing dot,
// in lower case.
func normHost(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), ".")
	return strings.ToLower(h)
}

// endpointName is the part of the path after "/sim/", as the handler routes.
func endpointName(path string) string {
	if i := strings.Index(path, "/sim/"); i >= 0 {
		path = path[i+len("/sim/"):]
	}
	return strings.TrimPrefix(path, "/")
}

func forbidden(msg string) error {
	return &httperr.Error{Status: http.StatusForbidden, Code: httperr.CodeForbidden, Message: msg}
}
