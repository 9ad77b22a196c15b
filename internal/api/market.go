package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/marketlink"
	"github.com/sniped/sniped/internal/store"
)

// marketHandler serves the account's link to its marketplace user
// (extensions: connectMarketAccount, getMarketAccount,
// unlinkMarketAccount) and the consent flow's return, {base}/market/callback.
// Without Config.MarketLinks (the built-in simulator) there is nothing to
// link: each account bids as the marketplace user of its own name.
type marketHandler struct{ s *server }

// callbackTimeout bounds the code exchange of one consent callback.
const callbackTimeout = 30 * time.Second

// callbackPath is where the marketplace's consent page sends the user back
// (the RuName's accept URL is {public-url}/market/callback).
const callbackPath = "market/callback"

func (h *marketHandler) links() *marketlink.Links { return h.s.cfg.MarketLinks }

// simulatorNoLink is the 409 for connecting or unlinking on the simulator.
func simulatorNoLink(acct store.Account) error {
	return httperr.Conflict(fmt.Sprintf("This server uses the built-in auction simulator, where account %s bids as marketplace user %q; there is no marketplace account to link or unlink.", acct.Name, acct.Name))
}

type connectMarketResponse struct {
	Status       string `json:"status"`
	Message      string `json:"message"`
	AuthorizeURL string `json:"authorize_url"`
	Expires      string `json:"expires"`
}

func (h *marketHandler) connect(w http.ResponseWriter, r *http.Request, c *call) error {
	l := h.links()
	if l == nil {
		return simulatorNoLink(c.acct)
	}
	f, err := l.Start(c.acct)
	if errors.Is(err, marketlink.ErrNoConsent) {
		return httperr.Conflict(fmt.Sprintf("This server is not set up for %s's consent page (it needs --ebay-runame), so only the operator can link accounts: %s.", l.MarketName(), l.LinkCommand(c.acct.Name)))
	}
	if err != nil {
		return httperr.Internal(err)
	}
	// The flow's binding goes to this browser only, as a cookie that the
	// callback alone receives: a consent page forwarded to someone else
	// comes back without it and links nothing (marketlink's state).
	http.SetCookie(w, &http.Cookie{
		Name: flowCookie, Value: f.Binding, Path: h.s.base + "/" + callbackPath,
		MaxAge: int(f.Expires.Sub(h.s.clock.Now()).Seconds()) + 1, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode,
	})
	return ok(w, connectMarketResponse{
		Status: "OK",
		Message: fmt.Sprintf("Open authorize_url before %s UTC in this browser (it keeps a cookie for the way back), sign in to %s and agree; you then come back to the dashboard with the account linked.",
			clock.FormatUTC(f.Expires), l.MarketName()),
		AuthorizeURL: f.AuthorizeURL,
		Expires:      clock.FormatUTC(f.Expires),
	})
}

// flowCookie carries a consent flow's binding (marketlink.Flow.Binding)
// from connectMarketAccount to the callback. SameSite=Lax lets the
// marketplace's redirect back (a top-level GET) carry it.
const flowCookie = "sniped_market_flow"

type marketAccountResponse struct {
	Status      string `json:"status"`
	Message     string `json:"message"`
	Marketplace string `json:"marketplace"`
	// LinkNeeded is 0 on the simulator, 1 on a real marketplace.
	LinkNeeded int `json:"link_needed"`
	Linked     int `json:"linked"`
	// Usable: snipes can bid with the link (linked, not expired, this
	// marketplace environment). On the simulator always 1.
	Usable       int    `json:"usable"`
	MarketUser   string `json:"market_user"`
	LinkedAt     string `json:"linked_at"`
	TokenExpires string `json:"token_expires"`
}

func (h *marketHandler) get(w http.ResponseWriter, r *http.Request, c *call) error {
	l := h.links()
	if l == nil {
		return ok(w, marketAccountResponse{
			Status: "OK", Marketplace: "simulator", Usable: 1, MarketUser: c.acct.Name,
			Message: fmt.Sprintf("This server uses the built-in auction simulator: your snipes bid as marketplace user %q (your account name), and no linking is needed.", c.acct.Name),
		})
	}
	st, err := l.Status(r.Context(), c.acct)
	if err != nil {
		return httperr.Internal(err)
	}
	resp := marketAccountResponse{Status: "OK", Marketplace: l.MarketName(), LinkNeeded: 1, MarketUser: st.User}
	if st.Linked {
		resp.Linked = 1
		resp.LinkedAt = clock.FormatUTC(st.LinkedAt)
		if !st.TokenExpires.IsZero() {
			resp.TokenExpires = clock.FormatUTC(st.TokenExpires)
		}
	}
	if st.Usable() {
		resp.Usable = 1
	}
	resp.Message = linkMessage(l, c.acct, st)
	return ok(w, resp)
}

// linkMessage describes a link and, when it cannot be used, what to do.
func linkMessage(l *marketlink.Links, acct store.Account, st marketlink.Status) string {
	mkt := l.MarketName()
	who := fmt.Sprintf("%s user %s", mkt, st.User)
	if st.User == "" {
		who = "a " + mkt + " user whose name sniped was not told (linked by the operator)"
	}
	switch {
	case !st.Linked:
		return fmt.Sprintf("No %s account is linked, so your snipes cannot bid. %s", mkt, l.HowToLink(acct.Name))
	case st.OtherMarket:
		return fmt.Sprintf("Linked to %s, but for another %s environment than this server's, so your snipes cannot bid. %s", who, mkt, l.HowToLink(acct.Name))
	case st.Unreadable:
		return fmt.Sprintf("Linked to %s, but the stored token cannot be decrypted with this server's secret key, so your snipes cannot bid. %s", who, l.HowToLink(acct.Name))
	case st.Expired:
		return fmt.Sprintf("The link to %s expired on %s UTC, so your snipes cannot bid. %s", who, clock.FormatUTC(st.TokenExpires), l.HowToLink(acct.Name))
	case st.TokenExpires.IsZero():
		return fmt.Sprintf("Linked to %s since %s UTC; snipes bid as that user.", who, clock.FormatUTC(st.LinkedAt))
	}
	return fmt.Sprintf("Linked to %s since %s UTC; snipes bid as that user. The link lasts until %s UTC; link again before then.",
		who, clock.FormatUTC(st.LinkedAt), clock.FormatUTC(st.TokenExpires))
}

// linkWarning is what addBid adds when the account's snipes cannot bid
// for want of a usable marketplace link; "" when they can (or on the
// simulator, or when the link cannot be read: the shot will tell).
func (s *server) linkWarning(ctx context.Context, acct store.Account) string {
	l := s.cfg.MarketLinks
	if l == nil {
		return ""
	}
	st, err := l.Status(ctx, acct)
	if err != nil || st.Usable() {
		return ""
	}
	return linkMessage(l, acct, st)
}

type unlinkMarketResponse struct {
	Status     string `json:"status"`
	Message    string `json:"message"`
	MarketUser string `json:"market_user"`
}

func (h *marketHandler) unlink(w http.ResponseWriter, r *http.Request, c *call) error {
	l := h.links()
	if l == nil {
		return simulatorNoLink(c.acct)
	}
	st, err := l.Status(r.Context(), c.acct)
	if err != nil {
		return httperr.Internal(err)
	}
	switch err := l.Unlink(r.Context(), c.acct); {
	case errors.Is(err, store.ErrNotFound):
		return httperr.NotFound(fmt.Sprintf("No %s account is linked to your account.", l.MarketName()))
	case err != nil:
		return httperr.Internal(err)
	}
	h.s.log.Info("market account unlinked", "account", c.acct.Name, "market_user", st.User)
	return ok(w, unlinkMarketResponse{
		Status:     "OK",
		MarketUser: st.User,
		Message: fmt.Sprintf("Unlinked: sniped no longer holds your %s token, and your snipes cannot bid until you link again. To withdraw sniped's access on %s's side as well, remove it from your %s account's third-party authorizations.",
			l.MarketName(), l.MarketName(), l.MarketName()),
	})
}

// marketAuthError is the 403 for a marketplace call refused for the
// account: the marketplace's own explanation (how to link, or what the
// operator must fix) when it gave one.
func marketAuthError(cause error) error {
	msg := market.Explain(cause)
	if msg == "" {
		msg = "The marketplace refused to act for your account. Link your marketplace account again, or ask the operator."
	}
	return &httperr.Error{Status: http.StatusForbidden, Code: httperr.CodeMarketAuth, Message: msg, Err: cause}
}

// Outcomes of the consent callback, passed to the dashboard as
// /ui/?market=OUTCOME (a fixed word, never free text, so a crafted link
// cannot make the page say anything else).
const (
	callbackLinked        = "linked"
	callbackDeclined      = "declined"
	callbackInvalid       = "invalid"
	callbackExpired       = "expired"
	callbackOtherBrowser  = "other_browser"
	callbackFailed        = "failed"
	callbackNotNeeded     = "not_needed"
	callbackNotConfigured = "not_configured"
)

// callback finishes a consent flow: the marketplace sends the browser here
// with code and state (or error, when the user declined). It needs no key:
// the signed state names the account that started the flow. It always
// answers with a redirect to the dashboard, which reports the outcome.
func (h *marketHandler) callback(w http.ResponseWriter, r *http.Request) error {
	if err := httperr.AllowGet(w, r); err != nil {
		return err
	}
	ip := clientIP(r)
	if err := h.s.limits.blocked(ip, h.s.clock.Now()); err != nil {
		return err
	}
	outcome := h.finish(r, ip)
	// The binding served its one flow.
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Path: h.s.base + "/" + callbackPath, MaxAge: -1, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, h.s.base+"/ui/?"+url.Values{"market": {outcome}}.Encode(), http.StatusFound)
	return nil
}

func (h *marketHandler) finish(r *http.Request, ip string) string {
	l := h.links()
	if l == nil {
		return callbackNotNeeded
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		h.s.limits.failed(ip, h.s.clock.Now())
		return callbackInvalid
	}
	code, state := q.Get("code"), q.Get("state")
	if code == "" && q.Get("error") != "" {
		h.s.log.Info("market consent declined", "error", q.Get("error"))
		return callbackDeclined
	}
	if code == "" || state == "" || len(q["code"]) > 1 || len(q["state"]) > 1 {
		h.s.limits.failed(ip, h.s.clock.Now())
		return callbackInvalid
	}
	// The code works once: finish the exchange even if the browser leaves
	// meanwhile, so that the user's consent is not wasted.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), callbackTimeout)
	defer cancel()
	var binding string
	if c, err := r.Cookie(flowCookie); err == nil {
		binding = c.Value
	}
	acct, st, err := l.Finish(ctx, code, state, binding)
	switch {
	case err == nil:
		h.s.log.Info("market account linked", "account", acct.Name, "market_user", st.User)
		return callbackLinked
	case errors.Is(err, marketlink.ErrNoConsent):
		return callbackNotConfigured
	case errors.Is(err, marketlink.ErrStateExpired):
		return callbackExpired
	case errors.Is(err, marketlink.ErrOtherBrowser):
		// A consent page forwarded from another browser (or a cookie
		// blocked): possibly someone else's flow, so it counts as a failure.
		h.s.limits.failed(ip, h.s.clock.Now())
		h.s.log.Warn("market consent returned to another browser than the one that started it; nothing linked")
		return callbackOtherBrowser
	case errors.Is(err, marketlink.ErrBadState):
		h.s.limits.failed(ip, h.s.clock.Now())
		return callbackInvalid
	}
	// The cause (which may name hosts) goes to the log, never the page.
	h.s.log.Warn("market account link failed", "account", acct.Name, "err", err)
	return callbackFailed
}
