package api

import (
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/store"
)

// authenticate maps the request's key (the key parameter or an
// Authorization: Bearer header) to a paid account.
func (s *server) authenticate(r *http.Request, p params) (store.Account, error) {
	k, _, err := requestKey(r, p)
	if err != nil {
		return store.Account{}, err
	}
	acct, err := s.accountByKey(r, k)
	if err != nil {
		return store.Account{}, err
	}
	if acct.Tier != store.TierPaid {
		return store.Account{}, &httperr.Error{Status: http.StatusForbidden, Code: httperr.CodeUpgradeRequired,
			Message: "the interface needs a paid account; ask the operator to upgrade account " + acct.Name}
	}
	return acct, nil
}

// AccountByKey resolves an account key exactly as the interface does, for
// other endpoints that take a key (the simulator's /sim/watch): a missing
// or wrong key counts against the failed-key limit of r's client address,
// and an address over it gets a 429 before any lookup. Failures are
// *httperr.Error values (401 missing_key or invalid_key, 429); the tier is
// not checked.
func (h *Handler) AccountByKey(r *http.Request, plain string) (store.Account, error) {
	return h.s.accountByKey(r, plain)
}

// accountByKey is the one key lookup. Failed attempts (a missing key
// included) count against the client address's own bucket, so that
// guessing keys is rate limited without letting unknown keys grow the
// per-account map.
func (s *server) accountByKey(r *http.Request, k string) (store.Account, error) {
	ip := clientIP(r)
	if err := s.limits.blocked(ip, s.clock.Now()); err != nil {
		return store.Account{}, err
	}
	if k == "" {
		s.limits.failed(ip, s.clock.Now()) // counted like a wrong key, as docs/api.md says
		return store.Account{}, &httperr.Error{Status: http.StatusUnauthorized, Code: httperr.CodeMissingKey, Param: "key",
			Message: "parameter \"key\" is required: pass your account key as ?key=... or in the header Authorization: Bearer <key>"}
	}
	// The store confirms the match in constant time (AccountByKeyHash).
	acct, err := s.cfg.Store.AccountByKeyHash(r.Context(), key.Hash(k))
	if errors.Is(err, store.ErrNotFound) {
		s.limits.failed(ip, s.clock.Now())
		return store.Account{}, &httperr.Error{Status: http.StatusUnauthorized, Code: httperr.CodeInvalidKey, Param: "key",
			Message: "the key is not valid; check it, or ask the operator for a new one"}
	}
	if err != nil {
		return store.Account{}, httperr.Internal(err)
	}
	return acct, nil
}

// clientIP is the peer address. X-Forwarded-For is not trusted: a proxy
// operator who needs it should terminate the limit at the proxy.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// requestKey returns the key from the key parameter or the Authorization
// header. The header keeps keys out of URLs, proxy logs and browser
// history; given both ways, the two must agree, so a request never
// silently acts as another account than one of them says.
func requestKey(r *http.Request, p params) (string, bool, error) {
	k, ok, err := p.Raw("key")
	if err != nil {
		return "", false, err
	}
	hdrs := r.Header.Values("Authorization")
	if len(hdrs) == 0 {
		return k, ok, nil
	}
	bad := &httperr.Error{Status: http.StatusBadRequest, Code: httperr.CodeInvalidParameter, Param: "Authorization",
		Message: "the Authorization header must be given once, as \"Bearer <key>\""}
	if len(hdrs) > 1 {
		return "", false, bad
	}
	scheme, bearer, found := strings.Cut(strings.TrimSpace(hdrs[0]), " ")
	bearer = strings.TrimSpace(bearer)
	if !found || !strings.EqualFold(scheme, "Bearer") || bearer == "" {
		return "", false, bad
	}
	if ok && k != "" && subtle.ConstantTimeCompare([]byte(k), []byte(bearer)) != 1 {
		return "", false, &httperr.Error{Status: http.StatusBadRequest, Code: httperr.CodeInvalidParameter, Param: "key",
			Message: "the key parameter and the Authorization header give different keys; give the key one way"}
	}
	return bearer, true, nil
}
