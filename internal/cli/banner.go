package cli

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// selfCommand is how to run this program again, for the commands the
// first-start banner prints. A "go run" build lives in a temporary
// directory that is gone when it exits, so the banner repeats "go run"; a
// binary found on the PATH is named bare; otherwise the path as invoked.
func selfCommand(arg0, exe string, goRun bool, haveCmdDir bool, version string) string {
	if goRun {
		const pkg = "github.com/sniped/sniped/cmd/sniped"
		switch {
		case version != "" && version != "(devel)":
			return "go run " + pkg + "@" + version
		case haveCmdDir:
			return "go run ./cmd/sniped"
		default:
			return "go run " + pkg
		}
	}
	if !strings.ContainsRune(arg0, filepath.Separator) {
		if p, err := exec.LookPath(arg0); err == nil && sameFile(p, exe) {
			return arg0
		}
		return shellQuote(exe)
	}
	return shellQuote(arg0)
}

// currentCommand applies selfCommand to this process.
func currentCommand() string {
	exe, _ := os.Executable()
	goRun := strings.Contains(filepath.ToSlash(exe), "/go-build")
	_, err := os.Stat(filepath.Join("cmd", "sniped"))
	version := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
	}
	return selfCommand(os.Args[0], exe, goRun, err == nil, version)
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// storeArgs are the flags that point a command at the same store. A
// database URL's password is never printed: the environment variable is
// named when it holds the URL, else the password is replaced.
func storeArgs(sf storeFlags) string {
	if sf.databaseURL == "" {
		return "--data " + shellQuote(sf.data)
	}
	if os.Getenv(envDatabase) == sf.databaseURL {
		return `--database-url "$` + envDatabase + `"`
	}
	u, err := url.Parse(sf.databaseURL)
	if err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "PASSWORD")
		}
		return "--database-url " + shellQuote(u.String()) + " (put the password back)"
	}
	return "--database-url " + shellQuote(sf.databaseURL)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
