package marketlink

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/sniped/sniped/internal/store"
)

// Consent-flow failures Finish reports (wrapped), for the callback to tell
// the user what happened.
var (
	// ErrNoConsent: this server has no consent flow (no Consent configured).
	ErrNoConsent = errors.New("this server cannot run the consent flow")
	// ErrBadState: the state is missing, malformed or forged.
	ErrBadState = errors.New("the link request is not valid")
	// ErrStateExpired: the state is genuine but too old.
	ErrStateExpired = errors.New("the link request has expired")
	// ErrOtherBrowser: the state is genuine, but the browser that returned
	// with it is not the one that started the flow (it lacks the flow's
	// binding).
	ErrOtherBrowser = errors.New("the link request was started in another browser")
	// ErrExchange: the marketplace refused or failed to exchange the code.
	ErrExchange = errors.New("the marketplace did not confirm the link")
)

// State layout: account ID, expiry (Unix seconds), the hash of the flow's
// binding and the account name, then an HMAC-SHA256 over them and the
// marketplace, all base64url. The server key never leaves the server; only
// a MAC made with a key derived from it is in the state.
//
// The state alone would let anyone who starts a flow for their own account
// send its consent page to someone else, whose agreement would then link
// that person's marketplace user to the starter's account. So each flow
// also has a binding: a random secret the browser that starts the flow
// keeps (the API sets it as a cookie), whose hash the state carries. The
// callback finishes only a flow whose binding the returning browser shows.
const (
	bindSize   = 16
	stateFixed = 8 + 8 + bindSize
	maxName    = 64
)

// Flow is a started consent flow.
type Flow struct {
	// AuthorizeURL is the marketplace's consent page to send the user to.
	AuthorizeURL string
	// Binding is the secret the starting browser must return with; never
	// put it in a URL.
	Binding string
	// Expires is when the flow expires.
	Expires time.Time
}

// Start begins acct's consent flow.
func (l *Links) Start(acct store.Account) (Flow, error) {
	if l.cfg.Consent == nil {
		return Flow{}, ErrNoConsent
	}
	if len(acct.Name) > maxName {
		return Flow{}, fmt.Errorf("marketlink: account name longer than %d bytes", maxName)
	}
	raw := make([]byte, bindSize)
	if _, err := rand.Read(raw); err != nil {
		panic("marketlink: crypto/rand failed: " + err.Error())
	}
	f := Flow{Binding: base64.RawURLEncoding.EncodeToString(raw), Expires: l.cfg.Clock.Now().Add(l.cfg.StateTTL).Truncate(time.Second)}
	f.AuthorizeURL = l.cfg.Consent.AuthorizeURL(l.signState(acct, f.Expires, f.Binding))
	return f, nil
}

// bindHash is what a state carries of a binding.
func bindHash(binding string) []byte {
	h := sha256.Sum256([]byte("sniped marketlink binding v1\x00" + binding))
	return h[:bindSize]
}

func (l *Links) signState(acct store.Account, expires time.Time, binding string) string {
	b := make([]byte, 16, stateFixed+len(acct.Name)+sha256.Size)
	binary.BigEndian.PutUint64(b[0:], uint64(acct.ID))
	binary.BigEndian.PutUint64(b[8:], uint64(expires.Unix()))
	b = append(b, bindHash(binding)...)
	b = append(b, acct.Name...)
	b = append(b, l.mac(b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (l *Links) mac(body []byte) []byte {
	m := hmac.New(sha256.New, l.state)
	m.Write([]byte(l.cfg.Market))
	m.Write([]byte{0})
	m.Write(body)
	return m.Sum(nil)
}

// checkState returns the account ID and name a state was signed for, once
// binding is the one it was started with.
func (l *Links) checkState(state, binding string) (int64, string, error) {
	if len(state) > 2*(stateFixed+maxName+sha256.Size) {
		return 0, "", ErrBadState
	}
	b, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(b) < stateFixed+sha256.Size {
		return 0, "", ErrBadState
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if !hmac.Equal(sum, l.mac(body)) {
		return 0, "", ErrBadState
	}
	expires := time.Unix(int64(binary.BigEndian.Uint64(body[8:])), 0)
	if !l.cfg.Clock.Now().Before(expires) {
		return 0, "", ErrStateExpired
	}
	if !hmac.Equal(body[16:stateFixed], bindHash(binding)) {
		return 0, "", ErrOtherBrowser
	}
	return int64(binary.BigEndian.Uint64(body[0:])), string(body[stateFixed:]), nil
}

// Finish completes a consent flow: it checks state and the binding the
// returning browser showed (Flow.Binding; "" when it showed none),
// exchanges code and links the account the state names. It returns that
// account and its new link. A bad or old state is ErrBadState or
// ErrStateExpired, a missing or other binding ErrOtherBrowser, and an
// account removed meanwhile is ErrBadState; no code is exchanged then. A
// failed exchange wraps ErrExchange and the marketplace's error.
func (l *Links) Finish(ctx context.Context, code, state, binding string) (store.Account, Status, error) {
	if l.cfg.Consent == nil {
		return store.Account{}, Status{}, ErrNoConsent
	}
	id, name, err := l.checkState(state, binding)
	if err != nil {
		return store.Account{}, Status{}, err
	}
	// The ID must match too: an account removed and re-created under the
	// same name does not inherit a flow.
	acct, err := l.cfg.Store.AccountByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) || (err == nil && acct.ID != id) {
		return store.Account{}, Status{}, fmt.Errorf("%w: its account no longer exists", ErrBadState)
	}
	if err != nil {
		return store.Account{}, Status{}, fmt.Errorf("marketlink: %w", err)
	}
	tok, err := l.cfg.Consent.ExchangeCode(ctx, code)
	if err != nil {
		return acct, Status{}, fmt.Errorf("%w: %w", ErrExchange, err)
	}
	if err := l.Link(ctx, acct, tok); err != nil {
		return acct, Status{}, err
	}
	st, err := l.Status(ctx, acct)
	return acct, st, err
}
