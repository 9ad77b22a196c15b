package sim

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// categoryColor is a listing's picture colour, by its top-level category.
func categoryColor(path string) string {
	for _, c := range categories {
		if c.Path == path {
			return c.Color
		}
	}
	return "#4a5568"
}

// writeSVG renders view n (1-3) of a listing's picture: a card in the
// category's colour with the title wrapped over a few lines.
func writeSVG(w io.Writer, l *listing, n int) error {
	bg := categoryColor(l.Category)
	shade := []string{"", "#ffffff", "#f7fafc", "#edf2f7"}[n]
	lines := wrap(l.Title, 22, 4)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300" viewBox="0 0 400 300">`)
	fmt.Fprintf(&b, `<rect width="400" height="300" fill="%s"/>`, bg)
	fmt.Fprintf(&b, `<rect x="20" y="20" width="360" height="260" rx="16" fill="%s" opacity="0.92"/>`, shade)
	for i, line := range lines {
		fmt.Fprintf(&b, `<text x="200" y="%d" font-family="sans-serif" font-size="24" text-anchor="middle" fill="#1a202c">%s</text>`,
			90+i*34, html.EscapeString(line))
	}
	last := l.Category
	if i := strings.LastIndex(last, ":"); i >= 0 {
		last = last[i+1:]
	}
	fmt.Fprintf(&b, `<text x="200" y="262" font-family="sans-serif" font-size="14" text-anchor="middle" fill="%s">%s · #%d · view %d</text>`,
		bg, html.EscapeString(last), l.ItemNo, n)
	b.WriteString(`</svg>`)
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap splits s into at most maxLines lines of about width characters.
func wrap(s string, width, maxLines int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		if cur != "" && len(cur)+1+len(w) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	if len(lines) > maxLines {
		lines = lines[:maxLines]
		lines[maxLines-1] += "…"
	}
	return lines
}
