//go:build unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// lockFile is the file in the data folder that serve holds an exclusive
// flock on while it runs. It holds the holder's PID and address, so that a
// second serve can say who has the folder.
const lockFile = "serve.lock"

// dataLock is serve's hold on its data folder.
type dataLock struct{ f *os.File }

// lockData takes the exclusive lock on data's lock file, or says which
// process holds it. The kernel drops the lock when the process ends, even
// by a crash, so there is never a stale lock to clean up; account commands
// do not take it (SQLite's WAL lets them work alongside).
func lockData(data string) (*dataLock, error) {
	path := filepath.Join(data, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := strings.TrimSpace(string(holder))
			if who == "" {
				who = "a process that is still starting"
			}
			return nil, fmt.Errorf("data folder %s is in use by another sniped serve (%s); stop it, or give this one another --data", data, who)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &dataLock{f: f}, nil
}

// record writes the holder's PID and address into the lock file.
func (l *dataLock) record(addr string) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt([]byte(fmt.Sprintf("pid %d, listening on %s\n", os.Getpid(), addr)), 0)
	return err
}

// release drops the lock. The file stays: removing it would let a third
// process lock a new file while a second still waits on the old one.
func (l *dataLock) release() { l.f.Close() }
