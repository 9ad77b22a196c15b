package sqlstore

import (
	"strings"
	"testing"
)

func TestInsertRows(t *testing.T) {
	t.Parallel()
	if got := insertRows(1); got != insertSnipe {
		t.Errorf("insertRows(1) = %q, want insertSnipe", got)
	}
	got := insertRows(3)
	if n := strings.Count(got, "("); n != 1+3 { // column list + 3 rows
		t.Errorf("insertRows(3) has %d parentheses groups, want 4: %s", n, got)
	}
	for _, want := range []string{"($1, $2,", "$22), ($23,", "$44), ($45,", "$66)"} {
		if !strings.Contains(got, want) {
			t.Errorf("insertRows(3) lacks %q: %s", want, got)
		}
	}
	if strings.Contains(got, "$67") {
		t.Errorf("insertRows(3) binds more than 66 parameters: %s", got)
	}
}
