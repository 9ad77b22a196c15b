package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/notify"
	"github.com/sniped/sniped/internal/store"
)

// notifyHandler serves the notification targets (extensions to the spec).
type notifyHandler struct{ s *server }

// service returns the notification service, or 503 when serve runs without one.
func (h *notifyHandler) service() (*notify.Service, error) {
	if h.s.cfg.Notify == nil {
		return nil, httperr.Unavailable("notifications are not enabled on this server", nil)
	}
	return h.s.cfg.Notify, nil
}

type notifierEntry struct {
	ID             int64    `json:"id"`
	Kind           string   `json:"kind"`
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	CreatedAt      string   `json:"created_at"`
	Enabled        int      `json:"enabled"`
	DisabledAt     string   `json:"disabled_at"`
	DisabledReason string   `json:"disabled_reason"`
	LastStatus     string   `json:"last_status"`
	LastAttemptAt  string   `json:"last_attempt_at"`
	LastError      string   `json:"last_error"`
	Failures       int      `json:"failures"`
}

// optTime is a UTC date-time, or "" for the zero time (never).
func optTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return clock.FormatUTC(t)
}

func newNotifierEntry(n store.Notifier) notifierEntry {
	events := n.Events
	if len(events) == 0 {
		events = store.EventTypes
	}
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = string(e)
	}
	e := notifierEntry{
		ID: n.ID, Kind: string(n.Kind), URL: n.MaskedURL, Events: names, CreatedAt: clock.FormatUTC(n.CreatedAt),
		Enabled: 1, LastStatus: n.LastStatus, LastError: n.LastError, Failures: n.Failures,
		LastAttemptAt: optTime(n.LastAt),
	}
	if e.LastStatus == "" {
		e.LastStatus = "never"
	}
	if n.Disabled {
		e.Enabled = 0
		e.DisabledAt = clock.FormatUTC(n.DisabledAt)
		e.DisabledReason = n.DisabledReason
	}
	return e
}

// events reads addNotifier's optional comma list of event types.
func (p params) events() ([]store.EventType, error) {
	s, ok, err := p.Optional("events")
	if err != nil || !ok {
		return nil, err
	}
	names := make([]string, len(store.EventTypes))
	for i, e := range store.EventTypes {
		names[i] = string(e)
	}
	rule := "events must be a comma-separated list of " + strings.Join(names, ", ")
	var out []store.EventType
	for part := range strings.SplitSeq(s, ",") {
		e := store.EventType(strings.TrimSpace(part))
		if !slices.Contains(store.EventTypes, e) {
			if e == "" {
				return nil, httperr.Invalid("events", rule+" (an entry is empty)")
			}
			return nil, httperr.Invalid("events", fmt.Sprintf("%s (%q is not one)", rule, e))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	if len(out) == len(store.EventTypes) {
		return nil, nil // every type, including ones added later
	}
	return out, nil
}

type addNotifierResponse struct {
	Status  string `json:"status"`
	Alert   string `json:"alert"`
	Message string `json:"message"`
	notifierEntry
	// Secret is shown once, for webhooks only.
	Secret string `json:"secret,omitempty"`
}

func (h *notifyHandler) add(w http.ResponseWriter, r *http.Request, c *call) error {
	svc, err := h.service()
	if err != nil {
		return err
	}
	raw, err := c.p.Required("url")
	if err != nil {
		return err
	}
	events, err := c.p.events()
	if err != nil {
		return err
	}
	res, err := svc.AddNotifier(r.Context(), c.acct.ID, strings.TrimSpace(raw), events)
	var te *notify.TargetError
	if errors.As(err, &te) {
		return httperr.Invalid("url", "url "+te.Message)
	}
	if err != nil {
		return httperr.Internal(err)
	}
	msg := fmt.Sprintf("Notification target %d added; it gets %s.", res.Notifier.ID, eventsPhrase(res.Notifier.Events))
	if res.Secret != "" {
		msg += " Keep the secret: it is shown only now, and every webhook is signed with it in the " + notify.SignatureHeader + " header."
	}
	return ok(w, addNotifierResponse{Status: "OK", Alert: "success", Message: msg, notifierEntry: newNotifierEntry(res.Notifier), Secret: res.Secret})
}

func eventsPhrase(ev []store.EventType) string {
	if len(ev) == 0 {
		return "every event"
	}
	names := make([]string, len(ev))
	for i, e := range ev {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

type notifiersResponse struct {
	Status    string          `json:"status"`
	Message   string          `json:"message"`
	Notifiers []notifierEntry `json:"notifiers"`
}

func (h *notifyHandler) list(w http.ResponseWriter, r *http.Request, c *call) error {
	list, err := h.s.cfg.Store.Notifiers(r.Context(), c.acct.ID)
	if err != nil {
		return httperr.Internal(err)
	}
	out := make([]notifierEntry, 0, len(list))
	disabled := 0
	for _, n := range list {
		out = append(out, newNotifierEntry(n))
		if n.Disabled {
			disabled++
		}
	}
	msg := plural(len(out), "notification target", "notification targets")
	if disabled > 0 {
		msg += fmt.Sprintf("; %s disabled because deliveries kept failing (see disabled_reason): fix the receiver, then a delivered testNotifier enables a target again", plural(disabled, "target is", "targets are"))
	}
	return ok(w, notifiersResponse{Status: "OK", Message: msg, Notifiers: out})
}

// notifierNotFound is the 404 for a target not in the caller's account.
func notifierNotFound(id int64) error {
	e := httperr.NotFound(fmt.Sprintf("notification target %d is not in your account", id))
	e.Param = "id"
	return e
}

type deleteNotifierResponse struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	ID      int64  `json:"id"`
}

func (h *notifyHandler) delete(w http.ResponseWriter, r *http.Request, c *call) error {
	id, err := c.p.id()
	if err != nil {
		return err
	}
	switch err := h.s.cfg.Store.DeleteNotifier(r.Context(), c.acct.ID, id); {
	case errors.Is(err, store.ErrNotFound):
		return notifierNotFound(id)
	case err != nil:
		return httperr.Internal(err)
	}
	return ok(w, deleteNotifierResponse{Status: "OK", Message: fmt.Sprintf("Notification target %d was deleted.", id), ID: id})
}

type testNotifierResponse struct {
	Status    string `json:"status"`
	Alert     string `json:"alert"`
	Message   string `json:"message"`
	ID        int64  `json:"id"`
	EventID   int64  `json:"event_id"`
	Delivered int    `json:"delivered"`
	Error     string `json:"error"`
}

func (h *notifyHandler) test(w http.ResponseWriter, r *http.Request, c *call) error {
	svc, err := h.service()
	if err != nil {
		return err
	}
	id, err := c.p.id()
	if err != nil {
		return err
	}
	res, err := svc.TestNotifier(r.Context(), c.acct.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return notifierNotFound(id)
	}
	if err != nil {
		return httperr.Internal(err)
	}
	out := testNotifierResponse{Status: "OK", ID: id, EventID: res.EventID, Error: res.Error}
	switch {
	case res.Delivered:
		out.Alert, out.Delivered = "success", 1
		out.Message = fmt.Sprintf("Test event %d was delivered to target %d.", res.EventID, id)
	case res.Queued:
		out.Alert = "info"
		out.Message = fmt.Sprintf("Test event %d is being delivered to target %d in the background; see getNotifiers for the result.", res.EventID, id)
	default:
		out.Alert = "error"
		out.Message = fmt.Sprintf("Test event %d was not delivered to target %d: %s.", res.EventID, id, res.Error)
	}
	return ok(w, out)
}

// getEvents page sizes.
const (
	DefaultEvents = 20
	MaxEvents     = 100
)

type eventEntry struct {
	ID        int64           `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

type eventsResponse struct {
	Status  string       `json:"status"`
	Message string       `json:"message"`
	Events  []eventEntry `json:"events"`
}

// events lists the account's recent events, newest first: what the
// targets were sent, for the dashboard and for clients that poll.
func (h *notifyHandler) events(w http.ResponseWriter, r *http.Request, c *call) error {
	limit, given, err := c.p.optInt("limit", 1, MaxEvents)
	if err != nil {
		return err
	}
	if !given {
		limit = DefaultEvents
	}
	var before int64
	if _, has, err := c.p.Optional("before"); err != nil {
		return err
	} else if has {
		if before, err = c.p.PositiveInt("before"); err != nil {
			return err
		}
	}
	list, err := h.s.cfg.Store.Events(r.Context(), c.acct.ID, before, limit)
	if err != nil {
		return httperr.Internal(err)
	}
	out := make([]eventEntry, 0, len(list))
	for _, e := range list {
		out = append(out, eventEntry{ID: e.ID, Type: string(e.Type), CreatedAt: clock.FormatUTC(e.CreatedAt), Data: json.RawMessage(e.Data)})
	}
	return ok(w, eventsResponse{Status: "OK", Message: plural(len(out), "event", "events"), Events: out})
}
