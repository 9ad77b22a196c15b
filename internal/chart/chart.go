// Package chart builds the bid-history chart datasets of the interface:
// the Chart.js 2 dataset array of getBidHistoryDataset and the Chart.js 1
// data object of getBidderDataset. The functions are pure: the caller
// supplies the history, the listing's span and the snipe amount.
package chart

import (
	"github.com/sniped/sniped/internal/clock"
	"github.com/sniped/sniped/internal/money"
	"time"
)

// Colours and styles. Chart.js 2 wants CSS colour strings; hex keeps the
// JSON compact and matches the spec's "hex colour".
const (
	HistoryColor      = "#36a2eb"
	HistoryHoverColor = "#ff9f40"
	SnipeColor        = "#ff6384"
	// Chart.js 1 colours (fills are translucent so both lines stay visible).
	V1HistoryFill   = "rgba(54,162,235,0.2)"
	V1HistoryStroke = "#36a2eb"
	V1SnipeFill     = "rgba(255,99,132,0)"
	V1SnipeStroke   = "#ff6384"
	V1PointStroke   = "#ffffff"
)

// Bid is one accepted bid: when, and the visible price after it.
type Bid struct {
	Time  time.Time
	Price money.Amount
}

// Input is what both datasets are built from.
type Input struct {
	Title    string
	Currency string
	// Snipe is the caller's snipe amount (0 for a watched item).
	Snipe money.Amount
	// Start and End are the listing's span, used for the snipe line when
	// the history has fewer than two bids.
	Start, End time.Time
	History    []Bid
}

// Point is a Chart.js 2 point: x in Unix milliseconds, y the amount.
type Point struct {
	X int64   `json:"x"`
	Y float64 `json:"y"`
}

// HistoryDataset is the first Chart.js 2 dataset: the bids as points.
type HistoryDataset struct {
	BackgroundColor           string  `json:"backgroundColor"`
	BorderColor               string  `json:"borderColor"`
	BorderWidth               float64 `json:"borderWidth"`
	Fill                      bool    `json:"fill"`
	Label                     string  `json:"label"`
	Data                      []Point `json:"data"`
	PointRadius               float64 `json:"pointRadius"`
	PointHoverRadius          float64 `json:"pointHoverRadius"`
	PointHoverBackgroundColor string  `json:"pointHoverBackgroundColor"`
	ShowLine                  bool    `json:"showLine"`
}

// SnipeDataset is the second Chart.js 2 dataset: a dashed horizontal line
// at the snipe amount, exactly two points.
type SnipeDataset struct {
	BorderCapStyle string    `json:"borderCapStyle"`
	BorderColor    string    `json:"borderColor"`
	BorderDash     []float64 `json:"borderDash"`
	BorderWidth    float64   `json:"borderWidth"`
	LineTension    float64   `json:"lineTension"`
	Data           []Point   `json:"data"`
	Fill           bool      `json:"fill"`
	Label          string    `json:"label"`
	PointRadius    float64   `json:"pointRadius"`
	ShowLine       bool      `json:"showLine"`
}

// BidHistory returns the getBidHistoryDataset body: the two datasets in
// order. Encode it as a JSON array.
func BidHistory(in Input) [2]any {
	pts := make([]Point, 0, len(in.History))
	for _, b := range in.History {
		pts = append(pts, Point{X: b.Time.UnixMilli(), Y: b.Price.Float()})
	}
	from, to := span(in)
	y := in.Snipe.Float()
	return [2]any{
		HistoryDataset{
			BackgroundColor: HistoryColor, BorderColor: HistoryColor, BorderWidth: 2, Fill: false,
			Label: in.Title, Data: pts, PointRadius: 3, PointHoverRadius: 6,
			PointHoverBackgroundColor: HistoryHoverColor, ShowLine: true,
		},
		SnipeDataset{
			BorderCapStyle: "butt", BorderColor: SnipeColor, BorderDash: []float64{6, 4}, BorderWidth: 2,
			LineTension: 0, Data: []Point{{X: from.UnixMilli(), Y: y}, {X: to.UnixMilli(), Y: y}},
			Fill: false, Label: SnipeLabel(in.Snipe, in.Currency), PointRadius: 0, ShowLine: true,
		},
	}
}

// span is the snipe line's extent: the history's first and last bid, or
// the listing's start and end when fewer than two bids would give a line
// of no length.
func span(in Input) (from, to time.Time) {
	if n := len(in.History); n >= 2 {
		return in.History[0].Time, in.History[n-1].Time
	}
	return in.Start, in.End
}

// SnipeLabel names the snipe amount with its currency.
func SnipeLabel(amount money.Amount, currency string) string {
	if amount == 0 {
		return "Your snipe: none (watched item, 0.00 " + currency + ")"
	}
	return "Your snipe: " + amount.String() + " " + currency
}

// V1Dataset is one Chart.js 1 line dataset.
type V1Dataset struct {
	Label            string    `json:"label"`
	FillColor        string    `json:"fillColor"`
	StrokeColor      string    `json:"strokeColor"`
	PointColor       string    `json:"pointColor"`
	PointStrokeColor string    `json:"pointStrokeColor"`
	Data             []float64 `json:"data"`
}

// V1Data is the getBidderDataset body: Chart.js 1 line chart data.
type V1Data struct {
	Labels   []string    `json:"labels"`
	Datasets []V1Dataset `json:"datasets"`
}

// Bidder returns the Chart.js 1 form of the same history: one label per
// bid (its UTC date-time), the prices, and the snipe amount as a flat
// second line. With no bids the labels are the listing's start and end and
// the history line is empty.
func Bidder(in Input) V1Data {
	labels := make([]string, 0, len(in.History))
	prices := make([]float64, 0, len(in.History))
	for _, b := range in.History {
		labels = append(labels, clock.FormatUTC(b.Time))
		prices = append(prices, b.Price.Float())
	}
	if len(labels) == 0 {
		labels = append(labels, clock.FormatUTC(in.Start), clock.FormatUTC(in.End))
	}
	snipe := make([]float64, len(labels))
	for i := range snipe {
		snipe[i] = in.Snipe.Float()
	}
	return V1Data{
		Labels: labels,
		Datasets: []V1Dataset{
			{Label: in.Title, FillColor: V1HistoryFill, StrokeColor: V1HistoryStroke, PointColor: V1HistoryStroke, PointStrokeColor: V1PointStroke, Data: prices},
			{Label: SnipeLabel(in.Snipe, in.Currency), FillColor: V1SnipeFill, StrokeColor: V1SnipeStroke, PointColor: V1SnipeStroke, PointStrokeColor: V1PointStroke, Data: snipe},
		},
	}
}
