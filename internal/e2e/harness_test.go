package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	// The binary is built at run time, so go test would not see its code
	// change and would replay a cached result; importing the CLI makes every
	// package the binary is built from part of this test's cache key.
	_ "github.com/sniped/sniped/internal/cli"
)

// binPath is the sniped binary built once by TestMain.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sniped-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "sniped")
	build := exec.Command("go", "build", "-o", binPath, "github.com/sniped/sniped/cmd/sniped")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building sniped: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startupTimeout bounds how long a server may take to become ready.
const startupTimeout = 60 * time.Second

var (
	listenLine = regexp.MustCompile(`listening on (http://\S+?)(?:\s|$)`)
	keyLine    = regexp.MustCompile(`^\s+(snp_[0-9a-f]{64})\s*$`)
)

// server is one running `sniped serve` process.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	Data string
	// URL is the base URL, e.g. http://127.0.0.1:43121.
	URL string
	// AdminKey is the key printed on first start ("" on later starts).
	AdminKey string

	mu      sync.Mutex
	stderr  strings.Builder
	dropped int // lines past maxKeptLog, not kept in stderr
	exited  chan struct{}
}

// logDirEnv names a folder that, when set, receives every launched
// process's stderr (one file per start) and makes the servers log at debug
// level: what a long fault or chaos run needs to diagnose a violation.
const logDirEnv = "SNIPED_E2E_LOGDIR"

// startServer runs `sniped serve --addr 127.0.0.1:0 --data data extra...`
// and waits until /healthz answers 200. It stops the process at cleanup.
func startServer(t *testing.T, data string, extra ...string) *server {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--sim-items", "200", "--sim-bidders", "off", "--rate-limit", "0"}, extra...)
	if os.Getenv(logDirEnv) != "" {
		args = append(args, "--log-level", "debug")
	}
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), "SNIPED_ADDR=", "SNIPED_DATA=")
	s := launch(t, cmd, data, "sniped")
	s.waitHealthy()
	return s
}

// launch starts cmd, a sniped command that prints "listening on URL" on
// stderr, keeps its stderr (and the first-start admin key) and returns once
// the URL is printed. It stops the process at cleanup.
func launch(t *testing.T, cmd *exec.Cmd, data, what string) *server {
	t.Helper()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, Data: data, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", what, err)
	}
	urlCh := make(chan string, 1)
	var keep io.Writer = io.Discard
	if dir := os.Getenv(logDirEnv); dir != "" {
		f, err := os.CreateTemp(dir, what+"-*.log")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		keep = f
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(keep, line)
			s.mu.Lock()
			if s.stderr.Len() < maxKeptLog {
				s.stderr.WriteString(line + "\n")
			} else {
				s.dropped++
			}
			if m := keyLine.FindStringSubmatch(line); m != nil && s.AdminKey == "" {
				s.AdminKey = m[1]
			}
			s.mu.Unlock()
			if m := listenLine.FindStringSubmatch(line); m != nil {
				select {
				case urlCh <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pipe)
	}()
	go func() { cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() { s.Stop() })

	select {
	case u := <-urlCh:
		s.URL = strings.TrimSuffix(u, "/")
	case <-s.exited:
		t.Fatalf("%s exited during start-up:\n%s", what, s.Log())
	case <-time.After(startupTimeout):
		t.Fatalf("%s did not print its address within %v:\n%s", what, startupTimeout, s.Log())
	}
	return s
}

func (s *server) waitHealthy() {
	s.t.Helper()
	deadline := time.Now().Add(startupTimeout)
	for {
		resp, err := http.Get(s.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("/healthz not ready after %v:\n%s", startupTimeout, s.Log())
		}
		select {
		case <-s.exited:
			s.t.Fatalf("sniped exited:\n%s", s.Log())
		case <-time.After(20 * time.Millisecond): // polling a real process; not a timing assertion
		}
	}
}

// maxKeptLog bounds the stderr a test keeps in memory: the soak's server
// logs every request, 500 a second, which would otherwise grow the test
// process by hundreds of MB over 30 minutes. SNIPED_E2E_LOGDIR keeps it all.
const maxKeptLog = 32 << 20

// Log returns what the server wrote to stderr so far (its first
// maxKeptLog bytes).
func (s *server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped > 0 {
		return s.stderr.String() + fmt.Sprintf("[%d more lines not kept in memory; %s keeps them]\n", s.dropped, logDirEnv)
	}
	return s.stderr.String()
}

// Key returns the admin key (read under the lock the reader goroutine uses).
func (s *server) Key() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.AdminKey
}

// Stop ends the server with SIGTERM and waits for it.
func (s *server) Stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// Kill ends the server with SIGKILL, as a crash would.
func (s *server) Kill() {
	s.cmd.Process.Kill()
	<-s.exited
}

// Get calls path with params and decodes the JSON body into a map.
func (s *server) Get(path string, params url.Values) (int, map[string]any) {
	s.t.Helper()
	status, body := s.GetRaw(path, params)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		s.t.Fatalf("GET %s: body is not a JSON object: %v\n%s", path, err, body)
	}
	return status, m
}

// GetRaw calls path with params and returns the status and body.
func (s *server) GetRaw(path string, params url.Values) (int, []byte) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	u := s.URL + path
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("GET %s: reading body: %v", path, err)
	}
	return resp.StatusCode, body
}

// runCLI runs the sniped binary with args and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), "SNIPED_ADDR=", "SNIPED_DATA=")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run sniped %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}
