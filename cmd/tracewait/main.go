// Command tracewait reads a Go execution trace of the sniper (snipebench
// -trace FILE) and reports how long the shots, once their timer fired,
// waited for a P before running, and the longest stretches goroutines ran
// without giving their P up. It is how the shot path's lateness was traced
// to scheduling (docs/performance.md, "Shot path").
//
//	go run ./cmd/snipebench -case steady -stored 100000 -trace /tmp/steady.trace
//	go run ./cmd/tracewait /tmp/steady.trace
//
// On a burst-only trace (-case burst), it also says how far apart the
// burst's shots were woken; a crowded moment's shots wait in
// -wait-in 'sniper.(*Sniper).waitCrowded;' (the semicolon leaves out
// the keeper, which waits in a closure of it).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

func main() {
	top := flag.Int("top", 15, "how many of the longest runs to list")
	wakeFunc := flag.String("wait-in", "sniper.sleepUntilOr", "the function a shot waits for its moment in")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: tracewait [-top N] [-wait-in FUNC] TRACE")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracewait:", err)
		os.Exit(1)
	}
	defer f.Close()
	r, err := analyze(f, *wakeFunc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracewait:", err)
		os.Exit(1)
	}
	r.print(os.Stdout, *top)
}

// run is one stretch a goroutine ran without giving its P up.
type run struct {
	ms       float64
	from, to string // the goroutine's stack where it resumed and where it stopped
}

type report struct {
	waits []float64 // ms from a shot's wake-up to running
	woken []float64 // ms from the first shot's wake-up to each one's
	runs  []run     // longer than 5 ms
}

// analyze follows every goroutine's state changes.
func analyze(in io.Reader, wakeFunc string) (report, error) {
	r, err := trace.NewReader(in)
	if err != nil {
		return report{}, err
	}
	type gstate struct {
		running trace.Time // when it last started running
		ready   trace.Time // when it last became runnable after waiting, if it waits in wakeFunc
		stopped string     // its stack when it last stopped
		resumed string     // its stack when it last started running
	}
	gs := map[trace.GoID]*gstate{}
	var out report
	var first trace.Time
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, err
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		g := gs[st.Resource.Goroutine()]
		if g == nil {
			g = &gstate{}
			gs[st.Resource.Goroutine()] = g
		}
		from, to := st.Goroutine()
		switch {
		case to == trace.GoRunning:
			g.running, g.resumed = ev.Time(), g.stopped
			if g.ready != 0 {
				out.waits = append(out.waits, float64(ev.Time()-g.ready)/1e6)
				g.ready = 0
			}
		case from == trace.GoRunning:
			g.stopped = stack(ev)
			if ms := float64(ev.Time()-g.running) / 1e6; g.running != 0 && ms > 5 {
				out.runs = append(out.runs, run{ms, g.resumed, g.stopped})
			}
		case from == trace.GoWaiting && to == trace.GoRunnable && strings.Contains(g.stopped, wakeFunc):
			g.ready = ev.Time()
			if first == 0 {
				first = ev.Time()
			}
			out.woken = append(out.woken, float64(ev.Time()-first)/1e6)
		}
	}
	return out, nil
}

// stack is the event's stack as the project's frames, the traced
// command's own (package main, such as snipebench's probes) included, or
// the innermost frame when none is the project's; innermost first.
func stack(ev trace.Event) string {
	var b strings.Builder
	for fr := range ev.Stack().Frames() {
		if strings.Contains(fr.Func, "sniped/") || strings.HasPrefix(fr.Func, "main.") || b.Len() == 0 {
			fmt.Fprintf(&b, "%s;", fr.Func[strings.LastIndex(fr.Func, "/")+1:])
		}
	}
	return b.String()
}

func (r report) print(w io.Writer, top int) {
	slices.Sort(r.waits)
	q := func(p float64) float64 { return r.waits[min(len(r.waits)-1, int(p*float64(len(r.waits))))] }
	if len(r.waits) == 0 {
		fmt.Fprintln(w, "no shot wake-ups found")
	} else {
		fmt.Fprintf(w, "shots woken: %d; wait for a P p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", len(r.waits), q(0.5), q(0.99), r.waits[len(r.waits)-1])
		// In a burst-only trace, how far apart the burst's timers fired.
		wq := func(p float64) float64 { return r.woken[min(len(r.woken)-1, int(p*float64(len(r.woken))))] }
		fmt.Fprintf(w, "woken after the first: p50 %.3f ms, p90 %.3f ms, last %.3f ms\n", wq(0.5), wq(0.9), r.woken[len(r.woken)-1])
	}
	slices.SortFunc(r.runs, func(a, b run) int { return int(b.ms*1000) - int(a.ms*1000) })
	fmt.Fprintf(w, "runs over 5 ms without giving the P up: %d\n", len(r.runs))
	for _, x := range r.runs[:min(top, len(r.runs))] {
		fmt.Fprintf(w, "%6.1f ms  from %s\n           to   %s\n", x.ms, x.from, x.to)
	}
}
