package ebaysim

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sniped/sniped/internal/market/ebay"
	"github.com/sniped/sniped/internal/market/sim"
)

// appScopes are the scopes an application token may have; userScopes those
// a user may consent to.
var (
	appScopes  = []string{ebay.ScopeAPI}
	userScopes = []string{ebay.ScopeAPI, ebay.ScopeOffer, ebay.ScopeIdentity}
)

// grant is what a token stands for.
type grant struct {
	User   string    `json:"user"` // "" for an application token
	Scopes []string  `json:"scopes"`
	Expiry time.Time `json:"expiry"`
}

func (g grant) has(scope string) bool { return slices.Contains(g.Scopes, scope) }

// code is an authorization code waiting to be exchanged.
type code struct {
	user, redirect string
	scopes         []string
	expiry         time.Time
}

// hash is how tokens and codes are kept: only their SHA-256.
func hash(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

func newToken(prefix string) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// oauthError writes OAuth's error answer.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// clientOK checks the request's Basic credentials in constant time.
func (s *Server) clientOK(r *http.Request) bool {
	id, secret, ok := r.BasicAuth()
	return ok && subtle.ConstantTimeCompare([]byte(id), []byte(s.cfg.ClientID)) == 1 &&
		subtle.ConstantTimeCompare([]byte(secret), []byte(s.cfg.ClientSecret)) == 1
}

// scopesOf splits a scope parameter; "" gives def.
func scopesOf(v string, def []string) []string {
	if strings.TrimSpace(v) == "" {
		return slices.Clone(def)
	}
	return strings.Fields(v)
}

func subset(want, have []string) bool {
	for _, s := range want {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

// token is POST /identity/v1/oauth2/token: client_credentials,
// authorization_code and refresh_token.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if !s.clientOK(r) {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "request body is not form-encoded")
		return
	}
	f := r.PostForm
	now := s.clk.Now()
	switch f.Get("grant_type") {
	case "client_credentials":
		sc := scopesOf(f.Get("scope"), appScopes)
		if !subset(sc, appScopes) {
			oauthError(w, http.StatusBadRequest, "invalid_scope", "the requested scope is invalid, unknown, malformed, or exceeds the scope granted to the client")
			return
		}
		tok := s.mint(&s.access, "sim-app-", grant{Scopes: sc, Expiry: now.Add(AccessTokenLife)})
		writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": int(AccessTokenLife.Seconds()), "token_type": "Application Access Token"})
	case "authorization_code":
		s.mu.Lock()
		c, ok := s.codes[hash(f.Get("code"))]
		delete(s.codes, hash(f.Get("code"))) // a code is used once
		s.mu.Unlock()
		if !ok || now.After(c.expiry) {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the provided authorization grant code is invalid or was issued to another client")
			return
		}
		if f.Get("redirect_uri") != c.redirect {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the redirect_uri does not match the one of the authorization request")
			return
		}
		rt, err := s.mintRefresh(grant{User: c.user, Scopes: c.scopes, Expiry: now.Add(RefreshTokenLife)})
		if err != nil {
			s.log.Error("ebaysim: could not store a refresh token", "err", err)
			oauthError(w, http.StatusInternalServerError, "server_error", "could not store the token")
			return
		}
		at := s.mint(&s.access, "sim-user-", grant{User: c.user, Scopes: c.scopes, Expiry: now.Add(AccessTokenLife)})
		writeJSON(w, http.StatusOK, map[string]any{
			"access_token": at, "expires_in": int(AccessTokenLife.Seconds()), "token_type": "User Access Token",
			"refresh_token": rt, "refresh_token_expires_in": int(RefreshTokenLife.Seconds()),
		})
	case "refresh_token":
		s.mu.Lock()
		g, ok := s.refresh[hash(f.Get("refresh_token"))]
		s.mu.Unlock()
		if !ok || now.After(g.Expiry) {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the provided authorization refresh token is invalid or was issued to another client")
			return
		}
		sc := scopesOf(f.Get("scope"), g.Scopes)
		if !subset(sc, g.Scopes) {
			oauthError(w, http.StatusBadRequest, "invalid_scope", "the requested scope is invalid, unknown, malformed, or exceeds the scope granted to the client")
			return
		}
		at := s.mint(&s.access, "sim-user-", grant{User: g.User, Scopes: sc, Expiry: now.Add(AccessTokenLife)})
		writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "expires_in": int(AccessTokenLife.Seconds()), "token_type": "User Access Token"})
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be client_credentials, authorization_code or refresh_token")
	}
}

// mint stores a new token's grant in m and returns the token.
func (s *Server) mint(m *map[string]grant, prefix string, g grant) string {
	tok := newToken(prefix)
	s.mu.Lock()
	defer s.mu.Unlock()
	(*m)[hash(tok)] = g
	if len(*m) > 100_000 { // bound memory: drop expired grants
		now := s.clk.Now()
		for k, v := range *m {
			if now.After(v.Expiry) {
				delete(*m, k)
			}
		}
	}
	return tok
}

// mintRefresh makes a refresh token and saves the token file.
func (s *Server) mintRefresh(g grant) (string, error) {
	tok := s.mint(&s.refresh, "sim-refresh-", g)
	return tok, s.saveTokens()
}

// MintRefreshToken makes a refresh token for user with every user scope,
// as eBay's developer portal does for a sandbox test user.
func (s *Server) MintRefreshToken(user string) (string, time.Time, error) {
	exp := s.clk.Now().Add(RefreshTokenLife)
	tok, err := s.mintRefresh(grant{User: user, Scopes: slices.Clone(userScopes), Expiry: exp})
	return tok, exp, err
}

// SetRuName registers (or moves) an RuName's accept URL, as eBay's
// developer portal does.
func (s *Server) SetRuName(name, acceptURL string) error {
	if name == "" || !ebay.HTTPURL(acceptURL) {
		return fmt.Errorf("ebaysim: an RuName needs a name and an absolute http(s) accept URL, not %q", acceptURL)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runames[name] = acceptURL
	return nil
}

// RevokeRefreshTokens drops every refresh token of user (its link breaks).
func (s *Server) RevokeRefreshTokens(user string) error {
	s.mu.Lock()
	for k, g := range s.refresh {
		if g.User == user {
			delete(s.refresh, k)
		}
	}
	s.mu.Unlock()
	return s.saveTokens()
}

// authAccess checks a request's bearer token; it returns the grant or
// writes eBay's 401 (errorId 1001).
func (s *Server) authAccess(w http.ResponseWriter, r *http.Request) (grant, bool) {
	s.mu.Lock()
	g, ok := s.access[hash(bearer(r))]
	s.mu.Unlock()
	if !ok || s.clk.Now().After(g.Expiry) {
		writeErrors(w, http.StatusUnauthorized, ebay.ErrorDetail{ErrorID: 1001, Domain: "OAuth", Category: "REQUEST",
			Message: "Invalid access token", LongMessage: "Invalid access token. Check the value of the Authorization HTTP request header."})
		return grant{}, false
	}
	return g, true
}

// insufficient writes eBay's 403 (errorId 1100).
func insufficient(w http.ResponseWriter) {
	writeErrors(w, http.StatusForbidden, ebay.ErrorDetail{ErrorID: 1100, Domain: "ACCESS", Category: "REQUEST",
		Message: "Insufficient permissions to fulfill the request."})
}

// acceptURL maps a redirect_uri, which must be a registered RuName as on
// eBay, to the URL the browser is sent back to. Only the application's
// credentials register one (--runame, /sim/runame), so the consent page
// never redirects, or hands a code, to a URL a stranger chose.
func (s *Server) acceptURL(ru string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.runames[ru]
	return u, ok
}

var consentPage = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Grant application access (simulated eBay)</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}label,input,button{display:block;margin:.5rem 0}input{width:100%;padding:.4rem}button{padding:.5rem 1.5rem}.err{color:#b00}</style>
</head><body>
<h1>Grant application access</h1>
<p>This is the simulated marketplace of <code>sniped market serve</code>. The application
<strong>{{.ClientID}}</strong> asks to bid and read your watch list on your behalf.</p>
{{if .Error}}<p class="err">{{.Error}}</p>{{end}}
<form method="get" action="authorize">
{{range $k, $v := .Hidden}}<input type="hidden" name="{{$k}}" value="{{$v}}">{{end}}
<label for="login">Marketplace user name</label>
<input id="login" name="login" required maxlength="64" pattern="[A-Za-z0-9._@-]{1,64}" autocomplete="username" value="{{.Login}}">
<button type="submit" name="approve" value="1">Agree</button>
<button type="submit" name="approve" value="0" formnovalidate>Disagree</button>
</form></body></html>`))

// authorize is the consent page: GET /oauth2/authorize. With login=NAME
// and approve=1 (a person pressing Agree, or a script) it redirects to the
// accept URL with code and state; approve=0 redirects with
// error=access_denied.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fail := func(msg string) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintln(w, msg)
	}
	if q.Get("client_id") != s.cfg.ClientID {
		fail("unknown client_id: the application is not registered with this marketplace")
		return
	}
	accept, ok := s.acceptURL(q.Get("redirect_uri"))
	if !ok {
		fail("redirect_uri must be a registered RuName (sniped market serve --runame NAME=URL, or /sim/runame)")
		return
	}
	if q.Get("response_type") != "code" {
		fail("response_type must be code")
		return
	}
	sc := scopesOf(q.Get("scope"), nil)
	if len(sc) == 0 || !subset(sc, userScopes) {
		fail("scope must be one or more of: " + strings.Join(userScopes, " "))
		return
	}
	back := func(v url.Values) {
		v.Set("state", q.Get("state"))
		sep := "?"
		if strings.Contains(accept, "?") {
			sep = "&"
		}
		http.Redirect(w, r, accept+sep+v.Encode(), http.StatusFound)
	}
	login, approve := q.Get("login"), q.Get("approve")
	switch {
	case approve == "0":
		back(url.Values{"error": {"access_denied"}})
		return
	case approve == "1" && sim.ValidName(login):
		c := newToken("sim-code-")
		s.mu.Lock()
		s.codes[hash(c)] = code{user: login, redirect: q.Get("redirect_uri"), scopes: sc, expiry: s.clk.Now().Add(codeLife)}
		s.mu.Unlock()
		back(url.Values{"code": {c}, "expires_in": {fmt.Sprint(int(codeLife.Seconds()))}})
		return
	}
	hidden := map[string]string{}
	for _, k := range []string{"client_id", "redirect_uri", "response_type", "scope", "state"} {
		hidden[k] = q.Get(k)
	}
	data := map[string]any{"ClientID": s.cfg.ClientID, "Hidden": hidden, "Login": login}
	if approve == "1" {
		data["Error"] = "Type a user name of 1 to 64 letters, digits, '.', '_', '-' or '@'."
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// form-action also governs the redirect that follows the submission,
	// so the accept URL's origin must be allowed, or browsers stop there.
	formAction := "'self'"
	if u, err := url.Parse(accept); err == nil {
		formAction += " " + u.Scheme + "://" + u.Host
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'; form-action "+formAction)
	w.Header().Set("X-Frame-Options", "DENY")
	_ = consentPage.Execute(w, data)
}

// identity is GET /commerce/identity/v1/user/.
func (s *Server) identity(w http.ResponseWriter, r *http.Request) {
	g, ok := s.authAccess(w, r)
	if !ok {
		return
	}
	if g.User == "" || !g.has(ebay.ScopeIdentity) {
		insufficient(w)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"userId": hash(g.User)[:16], "username": g.User, "accountType": "INDIVIDUAL"})
}

// tokenFile is the saved form of the refresh tokens.
type tokenFile struct {
	Refresh map[string]grant `json:"refresh"`
}

func (s *Server) loadTokens() error {
	if s.cfg.TokenFile == "" {
		return nil
	}
	b, err := os.ReadFile(s.cfg.TokenFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ebaysim: read tokens: %w", err)
	}
	var f tokenFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("ebaysim: token file %s is damaged: %w", s.cfg.TokenFile, err)
	}
	if f.Refresh != nil {
		s.refresh = f.Refresh
	}
	return nil
}

// saveTokens writes the refresh token hashes atomically.
func (s *Server) saveTokens() error {
	if s.cfg.TokenFile == "" {
		return nil
	}
	s.saveMu.Lock() // one writer at a time, so a later save never loses a token
	defer s.saveMu.Unlock()
	s.mu.Lock()
	b, err := json.Marshal(tokenFile{Refresh: s.refresh})
	s.mu.Unlock()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.cfg.TokenFile), ".tokens-*") // 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.cfg.TokenFile)
}
