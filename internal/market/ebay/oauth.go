package ebay

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sniped/sniped/internal/market"
)

// tokenAnswer is the token endpoint's answer.
type tokenAnswer struct {
	AccessToken           string `json:"access_token"`
	ExpiresIn             int64  `json:"expires_in"`
	RefreshToken          string `json:"refresh_token"`
	RefreshTokenExpiresIn int64  `json:"refresh_token_expires_in"`
	TokenType             string `json:"token_type"`
	// Error and ErrorDescription are OAuth's error fields.
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// relinkHint says how a user links (or relinks) their eBay account.
const relinkHint = `connect eBay again from the dashboard ("Connect eBay"), or have the operator run "sniped account link"`

// brokenLink is the market-auth error of a user whose eBay link no longer
// works (what says so: cause), with what to do for the user.
func brokenLink(user, cause string) error {
	return &explained{
		err:     fmt.Errorf("the eBay link of %s is broken: %s (expired or revoked); %s: %w", user, cause, relinkHint, market.ErrNotAuthorized),
		explain: "Your eBay link is broken: eBay no longer accepts its token (it expired or was revoked). To bid again, " + relinkHint + ".",
	}
}

// AuthorizeURL is the consent page a user visits to let sniped bid for
// them: {auth}/oauth2/authorize with the client id, the RuName as
// redirect_uri, and state echoed back to the accept URL.
func (a *Adapter) AuthorizeURL(state string) string {
	q := url.Values{
		"client_id":     {a.cfg.ClientID},
		"redirect_uri":  {a.cfg.RuName},
		"response_type": {"code"},
		"scope":         {strings.Join(UserScopes, " ")},
		"state":         {state},
	}
	return a.auth + "/oauth2/authorize?" + q.Encode()
}

// ExchangeCode turns the code of a user's consent into a refresh token
// (grant_type=authorization_code) and asks the Identity API whose it is.
func (a *Adapter) ExchangeCode(ctx context.Context, code string) (UserToken, error) {
	if code == "" {
		return UserToken{}, errors.New("ebay: the authorization code is empty")
	}
	now := a.clk.Now()
	tok, err := a.tokenCall(ctx, url.Values{
		"grant_type":   {"authorization_code"},
		"code":         {code},
		"redirect_uri": {a.cfg.RuName},
	})
	if errors.Is(err, errInvalidGrant) {
		return UserToken{}, fmt.Errorf("eBay refused the consent code (expired, already used, or for another RuName); start linking again: %w", market.ErrNotAuthorized)
	}
	if err != nil {
		return UserToken{}, err
	}
	if tok.RefreshToken == "" {
		return UserToken{}, fmt.Errorf("ebay: the token endpoint returned no refresh token: %w", market.ErrUnavailable)
	}
	user, err := a.identity(ctx, tok.AccessToken)
	if err != nil {
		return UserToken{}, err
	}
	ut := UserToken{RefreshToken: tok.RefreshToken, User: user}
	if tok.RefreshTokenExpiresIn > 0 {
		ut.RefreshExpiry = now.Add(time.Duration(tok.RefreshTokenExpiresIn) * time.Second).UTC()
	}
	return ut, nil
}

// identity returns the eBay user name of an access token.
func (a *Adapter) identity(ctx context.Context, access string) (string, error) {
	ans, err := a.do(ctx, request{
		api: apiIdentity, method: http.MethodGet, url: identityBase(a.api) + "/commerce/identity/v1/user/",
		header: http.Header{"Authorization": {"Bearer " + access}, "Accept": {"application/json"}},
		retry:  true,
	})
	if err != nil {
		return "", err
	}
	if ans.status != http.StatusOK {
		return "", a.apiError(apiIdentity, ans)
	}
	var u struct {
		Username string `json:"username"`
		UserID   string `json:"userId"`
	}
	if err := json.Unmarshal(ans.body, &u); err != nil {
		return "", fmt.Errorf("ebay identity: unreadable answer: %w", market.ErrUnavailable)
	}
	switch {
	case u.Username != "":
		return u.Username, nil
	case u.UserID != "": // eBay withholds some users' names from some applications
		return u.UserID, nil
	}
	return "", fmt.Errorf("ebay identity: the answer names no user: %w", market.ErrUnavailable)
}

// identityBase is the Identity API's host: eBay serves it from apiz.
// (api.ebay.com → apiz.ebay.com, api.sandbox.ebay.com →
// apiz.sandbox.ebay.com); any other host (sniped market serve) serves it
// itself.
func identityBase(api string) string {
	u, err := url.Parse(api)
	if err != nil || !strings.HasPrefix(u.Host, "api.") || !strings.HasSuffix(u.Host, ".ebay.com") {
		return api
	}
	u.Host = "apiz." + strings.TrimPrefix(u.Host, "api.")
	return strings.TrimSuffix(u.String(), "/")
}

// tokenCall posts form to the token endpoint with the application's basic
// credentials.
func (a *Adapter) tokenCall(ctx context.Context, form url.Values) (tokenAnswer, error) {
	basic := base64.StdEncoding.EncodeToString([]byte(a.cfg.ClientID + ":" + a.cfg.ClientSecret))
	ans, err := a.do(ctx, request{
		api: apiOAuth, method: http.MethodPost, url: a.api + "/identity/v1/oauth2/token",
		header: http.Header{
			"Authorization": {"Basic " + basic},
			"Content-Type":  {"application/x-www-form-urlencoded"},
			"Accept":        {"application/json"},
		},
		body:  []byte(form.Encode()),
		retry: true, // a token call changes nothing that a repeat could harm
	})
	if err != nil {
		return tokenAnswer{}, err
	}
	var t tokenAnswer
	_ = json.Unmarshal(ans.body, &t) // a body that is not JSON leaves the fields empty
	switch {
	case ans.status == http.StatusOK && t.AccessToken != "":
		return t, nil
	case t.Error == "invalid_client":
		return t, &explained{
			err:     fmt.Errorf("ebay refused the application's credentials (invalid_client): check the client id and secret and the environment (sandbox or production): %w", market.ErrNotAuthorized),
			explain: "eBay refused this sniped's application keys. Reconnecting your eBay account does not help: the operator must check the eBay client id and secret.",
		}
	case t.Error == "invalid_grant":
		return t, fmt.Errorf("%w: %s", errInvalidGrant, t.ErrorDescription)
	case t.Error == "invalid_scope":
		return t, fmt.Errorf("ebay refused the scopes asked for (invalid_scope); the application may lack access to the Offer API: %w", market.ErrNotAuthorized)
	case ans.status >= 500 || ans.status == http.StatusOK:
		return t, fmt.Errorf("ebay token endpoint: HTTP %d without a token: %w", ans.status, market.ErrUnavailable)
	}
	return t, fmt.Errorf("ebay token endpoint: HTTP %d %s: %w", ans.status, t.Error, market.ErrNotAuthorized)
}

// errInvalidGrant marks a refused code or refresh token.
var errInvalidGrant = errors.New("invalid_grant")

// appAccess returns a valid application token (client_credentials),
// fetching one when needed; concurrent callers share one fetch.
func (a *Adapter) appAccess(ctx context.Context) (string, error) {
	now := a.clk.Now()
	a.mu.Lock()
	t := a.appToken
	a.mu.Unlock()
	if t.valid(now) {
		return t.access, nil
	}
	v, err := a.flight(ctx, "app", func(ctx context.Context) (string, error) {
		a.mu.Lock()
		t := a.appToken
		a.mu.Unlock()
		if t.valid(a.clk.Now()) {
			return t.access, nil // refreshed while this caller queued
		}
		start := a.clk.Now()
		tok, err := a.tokenCall(ctx, url.Values{"grant_type": {"client_credentials"}, "scope": {ScopeAPI}})
		if err != nil {
			if errors.Is(err, errInvalidGrant) {
				err = fmt.Errorf("ebay refused the application token (%v): %w", err, market.ErrNotAuthorized)
			}
			return "", err
		}
		a.mu.Lock()
		a.appToken = token{access: tok.AccessToken, expiry: expiry(start, tok.ExpiresIn)}
		a.mu.Unlock()
		return tok.AccessToken, nil
	})
	return v, err
}

// CheckKeys asks eBay for an application token, which proves the client id
// and secret work in this environment. Serve calls it once at start, so
// that wrong keys show in the log before the first search fails; the token
// is kept for the calls that follow.
func (a *Adapter) CheckKeys(ctx context.Context) error {
	_, err := a.appAccess(ctx)
	return err
}

// userAccess returns a valid access token for user. It reads user's link
// (Links.RefreshToken) on every call, so that a link removed or replaced by
// any process (sniped account unlink, another instance on a shared
// database) stops the next call at once, and an access token is used only
// while the refresh token it came from is still the link's. A refresh is
// one per user in flight.
func (a *Adapter) userAccess(ctx context.Context, user string) (string, error) {
	if a.cfg.Links == nil {
		return "", fmt.Errorf("ebay: no account links are configured, so %s cannot act on eBay: %w", user, market.ErrNotAuthorized)
	}
	rt, err := a.cfg.Links.RefreshToken(ctx, user)
	if err != nil {
		a.mu.Lock()
		delete(a.userTokens, user) // no use keeping it: the link is gone
		a.mu.Unlock()
		return "", err
	}
	from := tokenHash(rt)
	valid := func() (string, bool) {
		a.mu.Lock()
		t := a.userTokens[user]
		a.mu.Unlock()
		return t.access, t.valid(a.clk.Now()) && t.from == from
	}
	if access, ok := valid(); ok {
		return access, nil
	}
	return a.flight(ctx, "user:"+user+":"+from, func(ctx context.Context) (string, error) {
		if access, ok := valid(); ok {
			return access, nil // refreshed while this caller queued
		}
		start := a.clk.Now()
		tok, err := a.tokenCall(ctx, url.Values{
			"grant_type":    {"refresh_token"},
			"refresh_token": {rt},
			"scope":         {strings.Join(UserScopes, " ")},
		})
		if err != nil {
			if errors.Is(err, errInvalidGrant) {
				return "", brokenLink(user, "eBay refused its refresh token")
			}
			return "", err
		}
		a.mu.Lock()
		a.userTokens[user] = token{access: tok.AccessToken, expiry: expiry(start, tok.ExpiresIn), from: from}
		a.mu.Unlock()
		return tok.AccessToken, nil
	})
}

// tokenHash names a refresh token in memory without keeping it.
func tokenHash(rt string) string {
	h := sha256.Sum256([]byte(rt))
	return hex.EncodeToString(h[:])
}

// dropUserToken forgets user's access token after eBay refused it, so the
// next call refreshes it.
func (a *Adapter) dropUserToken(user, access string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.userTokens[user].access == access {
		delete(a.userTokens, user)
	}
}

func (a *Adapter) dropAppToken(access string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.appToken.access == access {
		a.appToken = token{}
	}
}

// expiry is when to stop using a token fetched at start that lasts secs.
func expiry(start time.Time, secs int64) time.Time {
	life := time.Duration(secs) * time.Second
	if life <= 0 {
		life = 2 * time.Hour // eBay's documented lifetime
	}
	return start.Add(life - min(tokenMargin, life/2))
}

// flight runs fn once per key at a time. The shared call runs detached from
// any single caller's cancellation, bounded by a deadline of its own (so a
// stuck Links lookup cannot hold every later caller), and each caller
// stops waiting when its own ctx ends.
func (a *Adapter) flight(ctx context.Context, key string, fn func(context.Context) (string, error)) (string, error) {
	ch := a.flights.DoChan(key, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), (maxAttempts+1)*a.cfg.Timeout)
		defer cancel()
		return fn(fctx)
	})
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	}
}
