package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/store"
)

// DefaultImportTimeout bounds one importWatchList run. The spec warns that
// an import may take a minute or more.
const DefaultImportTimeout = 10 * time.Minute

// watchListHandler serves importWatchList.
type watchListHandler struct{ s *server }

// importResult is what one run did.
type importResult struct {
	imported, skipped int
}

// importRun is one account's running import; callers that arrive while it
// runs wait for the same result.
type importRun struct {
	done chan struct{}
	res  importResult
	err  error
}

// importRuns joins concurrent imports per account (singleflight).
type importRuns struct {
	mu   sync.Mutex
	runs map[int64]*importRun
	wg   sync.WaitGroup // every run's goroutine, for Handler.Wait
}

func newImportRuns() *importRuns { return &importRuns{runs: map[int64]*importRun{}} }

// start returns the account's running import, or starts fn as a new one.
// fn runs on its own goroutine so that a client that disconnects does not
// stop it.
func (ir *importRuns) start(acct int64, fn func() (importResult, error)) (run *importRun, joined bool) {
	ir.mu.Lock()
	defer ir.mu.Unlock()
	if run := ir.runs[acct]; run != nil {
		return run, true
	}
	run = &importRun{done: make(chan struct{})}
	ir.runs[acct] = run
	ir.wg.Go(func() {
		defer func() {
			if p := recover(); p != nil {
				run.err = fmt.Errorf("import panic: %v", p)
			}
			ir.mu.Lock()
			delete(ir.runs, acct)
			ir.mu.Unlock()
			close(run.done)
		}()
		run.res, run.err = fn()
	})
	return run, false
}

type importResponse struct {
	Status        string `json:"status"`
	Message       string `json:"message"`
	ItemsImported int    `json:"items_imported"`
	ItemsSkipped  int    `json:"items_skipped"`
	Joined        bool   `json:"joined"`
}

func (h *watchListHandler) importList(w http.ResponseWriter, r *http.Request, c *call) error {
	s := h.s
	acct := c.acct
	// The run outlives the request: it hangs off the service's base
	// context (cancelled at shutdown), with a deadline of its own.
	run, joined := s.imports.start(acct.ID, func() (importResult, error) {
		ctx, cancel := context.WithTimeout(s.cfg.BaseContext, s.cfg.ImportTimeout)
		defer cancel()
		res, err := s.importWatchList(ctx, acct)
		if err != nil {
			s.log.Warn("watch list import failed", "account", acct.Name, "err", err)
		}
		return res, err
	})
	if joined {
		s.log.Debug("watch list import joined", "account", acct.Name)
	}
	select {
	case <-run.done:
	case <-r.Context().Done():
		// The client left; the import goes on and its result is logged.
		return nil
	}
	if run.err != nil {
		var he *httperr.Error
		if errors.As(run.err, &he) {
			return he
		}
		if market.Transient(run.err) {
			return httperr.Unavailable("the marketplace is temporarily unavailable; the items imported so far are kept, try again shortly", run.err)
		}
		if errors.Is(run.err, market.ErrNotAuthorized) {
			return marketAuthError(run.err)
		}
		return httperr.Internal(run.err)
	}
	msg := fmt.Sprintf("Imported %d items from your marketplace watch list; %d were skipped because they are already in your account or have ended.", run.res.imported, run.res.skipped)
	return ok(w, importResponse{Status: "OK", Message: msg, ItemsImported: run.res.imported, ItemsSkipped: run.res.skipped, Joined: joined})
}

// importWatchList copies the marketplace watch list into watched items
// (bid 0). An item that already has a snipe is skipped untouched (an
// upsert would re-arm a settled snipe), and so is an item whose auction has
// ended: there is nothing left to watch.
func (s *server) importWatchList(ctx context.Context, acct store.Account) (importResult, error) {
	var res importResult
	items, err := s.cfg.Market.WatchList(ctx, acct.Name)
	if err != nil {
		return res, fmt.Errorf("market watch list: %w", err)
	}
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if it.Ended {
			res.skipped++
			continue
		}
		_, err := s.cfg.Store.Snipe(ctx, acct.ID, it.ItemNo)
		if err == nil {
			res.skipped++
			continue
		}
		if !errors.Is(err, store.ErrNotFound) {
			return res, err
		}
		sn, created, err := s.cfg.Store.UpsertSnipe(ctx, acct.ID, it.ItemNo, store.SnipeChange{Item: snapshot(it)}, s.marketNow())
		switch {
		case errors.Is(err, store.ErrConflict) || (err == nil && !created):
			res.skipped++ // created meanwhile by addBid
			continue
		case err != nil:
			return res, err
		}
		res.imported++
		s.notify(sn.ID)
	}
	s.log.Info("watch list imported", "account", acct.Name, "imported", res.imported, "skipped", res.skipped)
	return res, nil
}
