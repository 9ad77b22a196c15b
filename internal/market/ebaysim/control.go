package ebaysim

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/market/sim"
	"github.com/sniped/sniped/internal/param"
)

// withClient serves h only to requests with the application's
// credentials (HTTP Basic, like the token endpoint); others get 401
// invalid_client. Errors h returns use sniped's envelope.
func (s *Server) withClient(h httperr.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.clientOK(r) {
			oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed: pass the application's client id and secret as HTTP Basic credentials")
			return
		}
		httperr.Handler(s.log, h).ServeHTTP(w, r)
	}
}

// userParam is the required marketplace user name of a control call.
func userParam(q param.Values) (string, error) {
	user, err := q.Required("user")
	if err != nil {
		return "", err
	}
	if !sim.ValidName(user) {
		return "", httperr.Invalid("user", "parameter \"user\" must be 1 to 64 characters of letters, digits, '.', '_', '-' or '@'")
	}
	return user, nil
}

// simToken is /sim/token?user=NAME: it mints a refresh token for a
// marketplace user, as eBay's developer portal does for a sandbox test
// user, given the application's credentials (HTTP Basic, like the token
// endpoint); others get 401 invalid_client.
func (s *Server) simToken(w http.ResponseWriter, r *http.Request) error {
	q, err := param.Parse(r.URL.RawQuery)
	if err != nil {
		return err
	}
	user, err := userParam(q)
	if err != nil {
		return err
	}
	tok, exp, err := s.MintRefreshToken(user)
	if err != nil {
		return httperr.Internal(err)
	}
	httperr.WriteJSON(w, http.StatusOK, map[string]any{
		"status": "OK", "user": user, "refresh_token": tok,
		"refresh_token_expires_in": int(RefreshTokenLife.Seconds()), "expires_at": clock.FormatUTC(exp),
	})
	return nil
}

// simWatch is /sim/watch?user=NAME&item_no=N: it puts an item on a
// marketplace user's watch list (the simulator's own /sim/watch takes an
// account key, which this server has none of).
func (s *Server) simWatch(w http.ResponseWriter, r *http.Request) error {
	if err := httperr.AllowGet(w, r); err != nil {
		return err
	}
	q, err := param.Parse(r.URL.RawQuery)
	if err != nil {
		return err
	}
	user, err := userParam(q)
	if err != nil {
		return err
	}
	no, err := q.PositiveInt("item_no")
	if err != nil {
		return err
	}
	if err := s.sim.Watch(r.Context(), user, no); err != nil {
		switch {
		case errors.Is(err, market.ErrNotFound):
			return httperr.NotFound(fmt.Sprintf("item %d is not on the marketplace", no))
		case errors.Is(err, sim.ErrConflict):
			return httperr.Conflict(err.Error())
		}
		return httperr.Internal(err)
	}
	httperr.WriteJSON(w, http.StatusOK, map[string]any{"status": "OK", "user": user, "item_no": strconv.FormatInt(no, 10)})
	return nil
}

// simRuName is /sim/runame?name=NAME&accept_url=URL: it registers an
// RuName's accept URL, as eBay's developer portal does (handy when sniped's
// port is known only after it starts). Like /sim/token it needs the
// application's credentials, since it decides where consent codes go.
func (s *Server) simRuName(w http.ResponseWriter, r *http.Request) error {
	q, err := param.Parse(r.URL.RawQuery)
	if err != nil {
		return err
	}
	name, err := q.Required("name")
	if err != nil {
		return err
	}
	u, err := q.Required("accept_url")
	if err != nil {
		return err
	}
	if len(name) > 255 || param.HasControl(name) {
		return httperr.Invalid("name", "parameter \"name\" must be at most 255 printable characters")
	}
	if err := s.SetRuName(name, u); err != nil {
		return httperr.Invalid("accept_url", "parameter \"accept_url\" must be an absolute http(s) URL")
	}
	httperr.WriteJSON(w, http.StatusOK, map[string]any{"status": "OK", "name": name, "accept_url": u})
	return nil
}
