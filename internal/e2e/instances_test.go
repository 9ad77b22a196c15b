package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sniped/sniped/internal/store/postgres/pgtest"
)

// TestInstancesShareTheSniper runs real processes on one PostgreSQL schema:
// two instances split the 32 partitions; one stopped with SIGTERM hands its
// share over at once (no expiry); one killed with SIGKILL loses its share
// to the survivor when its leases expire. Skipped without PostgreSQL.
func TestInstancesShareTheSniper(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	a := startServer(t, t.TempDir(), "--database-url", dsn)
	b := startServer(t, t.TempDir(), "--database-url", dsn)
	waitHealth(t, a, "sniper: firing (16 of 32 partitions valid")
	waitHealth(t, b, "sniper: firing (16 of 32 partitions valid")

	b.Stop()
	waitHealth(t, a, "sniper: firing (32 of 32 partitions valid")
	if !strings.Contains(b.Log(), "partitions released at shutdown") {
		t.Errorf("the stopped instance did not hand its partitions over:\n%s", b.Log())
	}
	if strings.Contains(a.Log(), "taken_over_after_expiry") {
		t.Errorf("the survivor waited for expiry after a graceful stop:\n%s", a.Log())
	}

	c := startServer(t, t.TempDir(), "--database-url", dsn)
	waitHealth(t, c, "sniper: firing (16 of 32 partitions valid")
	waitHealth(t, a, "sniper: firing (16 of 32 partitions valid")
	c.Kill()
	waitHealth(t, a, "sniper: firing (32 of 32 partitions valid")
	if !strings.Contains(a.Log(), "taken_over_after_expiry") {
		t.Errorf("after a kill the survivor's log does not say it took expired leases:\n%s", a.Log())
	}
}

// waitHealth polls /healthz until its body contains want.
func waitHealth(t *testing.T, s *server, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.URL + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if last = string(body); strings.Contains(last, want) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond) // polling a real process; not a timing assertion
	}
	t.Fatalf("/healthz of %s never said %q; last: %q\n%s", s.URL, want, last, s.Log())
}
