package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSelfCommand(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		arg0, exe  string
		goRun, dir bool
		version    string
		want       string
	}{
		{"go run in the repository", "/tmp/go-build123/b001/exe/sniped", "/tmp/go-build123/b001/exe/sniped", true, true, "(devel)", "go run ./cmd/sniped"},
		{"go run elsewhere in the module", "/tmp/go-build1/b001/exe/sniped", "/tmp/go-build1/b001/exe/sniped", true, false, "(devel)", "go run github.com/sniped/sniped/cmd/sniped"},
		{"go run of a version", "/tmp/go-build1/b001/exe/sniped", "/tmp/go-build1/b001/exe/sniped", true, false, "v1.2.0", "go run github.com/sniped/sniped/cmd/sniped@v1.2.0"},
		{"relative path", "./bin/sniped", "/srv/bin/sniped", false, false, "", "./bin/sniped"},
		{"absolute path with a space", "/opt/my apps/sniped", "/opt/my apps/sniped", false, false, "", "'/opt/my apps/sniped'"},
		{"bare name not on PATH", "sniped-not-on-path", exe, false, false, "", exe},
	} {
		if got := selfCommand(tc.arg0, tc.exe, tc.goRun, tc.dir, tc.version); got != tc.want {
			t.Errorf("%s: selfCommand = %q, want %q", tc.name, got, tc.want)
		}
	}
	// A bare name found on the PATH that is this very binary stays bare.
	dir := filepath.Dir(exe)
	t.Setenv("PATH", dir)
	if got := selfCommand(filepath.Base(exe), exe, false, false, ""); got != filepath.Base(exe) {
		t.Errorf("selfCommand(on PATH) = %q, want %q", got, filepath.Base(exe))
	}
}

func TestStoreArgs(t *testing.T) {
	t.Setenv(envDatabase, "postgres://u:secret@db/sniped")
	for _, tc := range []struct {
		sf   storeFlags
		want string
	}{
		{storeFlags{data: "./sniped-data"}, "--data ./sniped-data"},
		{storeFlags{data: "my data"}, "--data 'my data'"},
		{storeFlags{databaseURL: "postgres://u:secret@db/sniped"}, `--database-url "$SNIPED_DATABASE_URL"`},
		{storeFlags{databaseURL: "postgres://u:other@db/x"}, "--database-url postgres://u:PASSWORD@db/x (put the password back)"},
	} {
		if got := storeArgs(tc.sf); got != tc.want {
			t.Errorf("storeArgs(%+v) = %q, want %q", tc.sf, got, tc.want)
		}
	}
}
