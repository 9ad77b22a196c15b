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
	// ErrExchange: the marketplace refused or failed to exchange the code.
	ErrExchange = errors.New("the marketplace did not confirm the link")
)

// State layout: account ID, expiry (Unix seconds), a random nonce and the
// account name, then an HMAC-SHA256 over them and the marketplace, all
// base64url. The server key never leaves the server; only a MAC made with
// a key derived from it is in the state.
const (
	stateFixed = 8 + 8 + 8
	maxName    = 64
)

// Start begins acct's consent flow: the marketplace's consent page to send
// the user to, and when the flow expires.
func (l *Links) Start(acct store.Account) (authorizeURL string, expires time.Time, err error) {
	if l.cfg.Consent == nil {
		return "", time.Time{}, ErrNoConsent
	}
	if len(acct.Name) > maxName {
		return "", time.Time{}, fmt.Errorf("marketlink: account name longer than %d bytes", maxName)
	}
	expires = l.cfg.Clock.Now().Add(l.cfg.StateTTL).Truncate(time.Second)
	return l.cfg.Consent.AuthorizeURL(l.signState(acct, expires)), expires, nil
}

func (l *Links) signState(acct store.Account, expires time.Time) string {
	b := make([]byte, stateFixed, stateFixed+len(acct.Name)+sha256.Size)
	binary.BigEndian.PutUint64(b[0:], uint64(acct.ID))
	binary.BigEndian.PutUint64(b[8:], uint64(expires.Unix()))
	if _, err := rand.Read(b[16:stateFixed]); err != nil {
		panic("marketlink: crypto/rand failed: " + err.Error())
	}
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

// checkState returns the account ID and name a state was signed for.
func (l *Links) checkState(state string) (int64, string, error) {
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
	return int64(binary.BigEndian.Uint64(body[0:])), string(body[stateFixed:]), nil
}

// Finish completes a consent flow: it checks state, exchanges code and
// links the account the state names. It returns that account and its new
// link. A bad or old state is ErrBadState or ErrStateExpired, and an
// account removed meanwhile is ErrBadState too; a failed exchange wraps
// ErrExchange and the marketplace's error.
func (l *Links) Finish(ctx context.Context, code, state string) (store.Account, Status, error) {
	if l.cfg.Consent == nil {
		return store.Account{}, Status{}, ErrNoConsent
	}
	id, name, err := l.checkState(state)
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
