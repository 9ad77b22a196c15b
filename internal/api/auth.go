package api

import (
	"errors"
	"net"
	"net/http"

	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/key"
	"github.com/sniped/sniped/internal/store"
)

// authenticate maps the key parameter to a paid account.
func (s *server) authenticate(r *http.Request, p params) (store.Account, error) {
	k, _, err := p.Raw("key")
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

// accountByKey is the one key lookup. Failed attempts count against the
// client address's own bucket, so that guessing keys is rate limited
// without letting unknown keys grow the per-account map.
func (s *server) accountByKey(r *http.Request, k string) (store.Account, error) {
	ip := clientIP(r)
	if err := s.limits.blocked(ip, s.clock.Now()); err != nil {
		return store.Account{}, err
	}
	if k == "" {
		s.limits.failed(ip, s.clock.Now()) // counted like a wrong key, as docs/api.md says
		return store.Account{}, &httperr.Error{Status: http.StatusUnauthorized, Code: httperr.CodeMissingKey, Param: "key",
			Message: "parameter \"key\" is required: pass your account key as ?key=..."}
	}
	h := key.Hash(k)
	acct, err := s.cfg.Store.AccountByKeyHash(r.Context(), h)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !key.Equal(acct.KeyHash, h)) {
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
