package chart

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/money"
)

var (
	start = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	end   = start.Add(7 * 24 * time.Hour)
	hexRE = regexp.MustCompile(`^#[0-9a-f]{6}$`)
)

func TestBidHistory(t *testing.T) {
	t.Parallel()
	b1, b2, b3 := start.Add(time.Hour), start.Add(2*time.Hour), start.Add(3*time.Hour)
	tests := []struct {
		name             string
		in               Input
		wantPoints       int
		wantFrom, wantTo time.Time
		wantLabel        string
	}{
		{"history", Input{Title: "Cam", Currency: "USD", Snipe: 4550, Start: start, End: end,
			History: []Bid{{b1, 1000}, {b2, 1500}, {b3, 2000}}}, 3, b1, b3, "Your snipe: 45.50 USD"},
		{"no history", Input{Title: "Cam", Currency: "EUR", Snipe: 1000, Start: start, End: end}, 0, start, end, "Your snipe: 10.00 EUR"},
		{"one bid", Input{Title: "Cam", Currency: "USD", Snipe: 1000, Start: start, End: end, History: []Bid{{b1, 1000}}}, 1, start, end, "Your snipe: 10.00 USD"},
		{"watched", Input{Title: "Cam", Currency: "USD", Start: start, End: end}, 0, start, end, "Your snipe: none (watched item, 0.00 USD)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BidHistory(tt.in)
			hist := got[0].(HistoryDataset)
			line := got[1].(SnipeDataset)
			if len(hist.Data) != tt.wantPoints || hist.Data == nil {
				t.Errorf("history points = %v, want %d (never null)", hist.Data, tt.wantPoints)
			}
			if hist.Label != tt.in.Title {
				t.Errorf("history label = %q, want %q", hist.Label, tt.in.Title)
			}
			for i, b := range tt.in.History {
				if p := hist.Data[i]; p.X != b.Time.UnixMilli() || p.Y != b.Price.Float() {
					t.Errorf("point %d = %+v, want {%d %v}", i, p, b.Time.UnixMilli(), b.Price.Float())
				}
			}
			want := []Point{{tt.wantFrom.UnixMilli(), tt.in.Snipe.Float()}, {tt.wantTo.UnixMilli(), tt.in.Snipe.Float()}}
			if len(line.Data) != 2 || line.Data[0] != want[0] || line.Data[1] != want[1] {
				t.Errorf("snipe line = %v, want %v", line.Data, want)
			}
			if line.Label != tt.wantLabel {
				t.Errorf("snipe label = %q, want %q", line.Label, tt.wantLabel)
			}
			for _, c := range []string{hist.BackgroundColor, hist.BorderColor, hist.PointHoverBackgroundColor, line.BorderColor} {
				if !hexRE.MatchString(c) {
					t.Errorf("colour %q is not a hex colour", c)
				}
			}
		})
	}
}

// TestBidHistoryJSON pins the exact keys and JSON types of spec section 4.
func TestBidHistoryJSON(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(BidHistory(Input{Title: "Cam", Currency: "USD", Snipe: 1234, Start: start, End: end,
		History: []Bid{{start, 100}, {end, 200}}}))
	if err != nil {
		t.Fatal(err)
	}
	var sets []map[string]any
	if err := json.Unmarshal(raw, &sets); err != nil || len(sets) != 2 {
		t.Fatalf("BidHistory JSON = %s, want an array of two objects", raw)
	}
	kinds := []map[string]string{
		{"backgroundColor": "string", "borderColor": "string", "borderWidth": "number", "fill": "bool", "label": "string",
			"data": "array", "pointRadius": "number", "pointHoverRadius": "number", "pointHoverBackgroundColor": "string", "showLine": "bool"},
		{"borderCapStyle": "string", "borderColor": "string", "borderDash": "array", "borderWidth": "number", "lineTension": "number",
			"data": "array", "fill": "bool", "label": "string", "pointRadius": "number", "showLine": "bool"},
	}
	for i, want := range kinds {
		if len(sets[i]) != len(want) {
			t.Errorf("dataset %d has keys %v, want exactly %v", i, keys(sets[i]), keys(want))
		}
		for k, kind := range want {
			if got := jsonKind(sets[i][k]); got != kind {
				t.Errorf("dataset %d %s is %s, want %s", i, k, got, kind)
			}
		}
	}
	p := sets[0]["data"].([]any)[0].(map[string]any)
	if x, ok := p["x"].(float64); !ok || x != float64(start.UnixMilli()) {
		t.Errorf("point x = %v, want %d", p["x"], start.UnixMilli())
	}
	for _, d := range sets[1]["borderDash"].([]any) {
		if jsonKind(d) != "number" {
			t.Errorf("borderDash entry %v is not a number", d)
		}
	}
}

func TestBidder(t *testing.T) {
	t.Parallel()
	got := Bidder(Input{Title: "Cam", Currency: "USD", Snipe: 3000, Start: start, End: end,
		History: []Bid{{start.Add(time.Hour), 1000}, {start.Add(2 * time.Hour), 1250}}})
	if len(got.Labels) != 2 || got.Labels[0] != "2026-03-01 11:00:00" {
		t.Errorf("labels = %v", got.Labels)
	}
	if len(got.Datasets) != 2 {
		t.Fatalf("datasets = %d, want 2", len(got.Datasets))
	}
	if d := got.Datasets[0].Data; len(d) != 2 || d[1] != 12.5 {
		t.Errorf("history data = %v", d)
	}
	if d := got.Datasets[1].Data; len(d) != 2 || d[0] != 30 || d[1] != 30 {
		t.Errorf("snipe data = %v", d)
	}
	for _, ds := range got.Datasets {
		if ds.Label == "" || ds.FillColor == "" || ds.StrokeColor == "" || ds.PointColor == "" || ds.PointStrokeColor == "" {
			t.Errorf("dataset %+v misses a field", ds)
		}
	}

	empty := Bidder(Input{Title: "Cam", Currency: "USD", Snipe: 100, Start: start, End: end})
	if len(empty.Labels) != 2 || empty.Datasets[0].Data == nil || len(empty.Datasets[1].Data) != 2 {
		t.Errorf("no-history Bidder = %+v", empty)
	}
}

func TestSnipeLabel(t *testing.T) {
	t.Parallel()
	if got := SnipeLabel(money.Amount(123456), "GBP"); got != "Your snipe: 1234.56 GBP" {
		t.Errorf("SnipeLabel = %q", got)
	}
}

func keys(m any) []string {
	var out []string
	switch m := m.(type) {
	case map[string]any:
		for k := range m {
			out = append(out, k)
		}
	case map[string]string:
		for k := range m {
			out = append(out, k)
		}
	}
	return out
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}
