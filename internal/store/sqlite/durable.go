package sqlite

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// walSync makes chosen commits survive power loss: the sniper's firing mark
// and the record of a placed bid (store.TransitionParams.Durable).
//
// Commits run with synchronous=NORMAL, which in WAL mode survives a process
// crash but not a power cut: the WAL is fsynced only at checkpoints. After
// a durable write has committed, sync fsyncs the WAL file, which holds that
// commit's frames (or a checkpoint already copied them into the database
// file and fsynced it). This is what synchronous=FULL does at every commit,
// but here only for the writes that need it, and as a group commit: one
// fsync covers every durable write that committed before it started, so a
// burst of shots pays for a few fsyncs, not one each. FULL on every commit
// instead saturated the one writer at 2,000 shots/s (docs/performance.md).
type walSync struct {
	path string

	mu      sync.Mutex
	cond    *sync.Cond
	started uint64 // fsyncs started
	done    uint64 // the newest fsync finished
	running bool
	err     error // the result of fsync number done
}

// sync returns once an fsync of the WAL that started after the call has
// finished.
func (w *walSync) sync(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cond == nil {
		w.cond = sync.NewCond(&w.mu)
	}
	need := w.started + 1 // one running now may have started before our commit
	for w.done < need {
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.running {
			w.cond.Wait()
			continue
		}
		w.running = true
		w.started++
		n := w.started
		w.mu.Unlock()
		err := w.fsync()
		w.mu.Lock()
		w.running, w.done, w.err = false, n, err
		w.cond.Broadcast()
	}
	return w.err
}

// fsync opens the WAL afresh each time: SQLite may delete and recreate it
// (when the last connection of any process closes), and an old descriptor
// would sync the old file.
func (w *walSync) fsync() error {
	f, err := os.Open(w.path)
	if err != nil {
		return fmt.Errorf("open WAL: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync WAL: %w", err)
	}
	return nil
}
