package notify

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/store"
)

// Envelope is the JSON body of a webhook: the event with its outbox ID,
// which stays the same on every retry so receivers can drop duplicates.
type Envelope struct {
	ID        int64           `json:"id"`
	Type      store.EventType `json:"type"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

func envelope(ev store.Event) ([]byte, error) {
	data := json.RawMessage(ev.Data)
	if len(data) == 0 {
		data = json.RawMessage(`{}`)
	}
	return json.Marshal(Envelope{ID: ev.ID, Type: ev.Type, CreatedAt: clock.FormatUTC(ev.CreatedAt), Data: data})
}

// textItems bounds the items a search.match message lists: a run may find
// up to 100, and chat services refuse long messages (Discord at 2,000
// characters, Telegram at 4,096), which would fail the delivery for a day
// and then disable the target.
const textItems = 10

// text is the human message sent to chat, push and email services.
func text(ev store.Event) string {
	switch ev.Type {
	case store.EventSearchMatch:
		var d store.SearchMatchData
		if json.Unmarshal(ev.Data, &d) != nil {
			break
		}
		var b strings.Builder
		fmt.Fprintf(&b, "sniped: %d new item(s) match your saved search %q:", len(d.Items), d.Query)
		for i, it := range d.Items {
			if i == textItems {
				fmt.Fprintf(&b, "\n... and %d more (getSearchResults?id=%d lists them all).", len(d.Items)-i, d.SearchID)
				break
			}
			fmt.Fprintf(&b, "\n- %s (item %s): %.2f %s, ends %s UTC", it.Title, it.ItemNo, it.CurrentPrice, it.Currency, it.EndTime)
		}
		return b.String()
	case store.EventTest:
		return "sniped: test notification. This target works."
	default:
		var d store.SnipeEventData
		if json.Unmarshal(ev.Data, &d) != nil {
			break
		}
		head := map[store.EventType]string{
			store.EventSnipePlaced:      "Bid placed",
			store.EventSnipeWon:         "Won",
			store.EventSnipeLost:        "Lost (" + d.Status + ")",
			store.EventSnipeWarning:     "Warning: your maximum can no longer win",
			store.EventMarketLinkBroken: "Marketplace link broken",
		}[ev.Type]
		msg := fmt.Sprintf("sniped: %s: %s (item %s), your maximum %.2f %s, price %.2f %s. %s",
			head, d.Title, d.ItemNo, d.Bid, d.Currency, d.CurrentPrice, d.Currency, d.Message)
		if d.Detail != "" {
			msg += " " + d.Detail
		}
		return msg
	}
	return "sniped: " + string(ev.Type)
}
