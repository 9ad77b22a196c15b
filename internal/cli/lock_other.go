//go:build !unix

package cli

// dataLock is a no-op where flock is not available: running two serve
// processes on one data folder is then not detected.
type dataLock struct{}

func lockData(string) (*dataLock, error) { return &dataLock{}, nil }

func (*dataLock) record(string) error { return nil }

func (*dataLock) release() {}
