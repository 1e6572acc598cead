package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// baseline is the Respire client the tables compare with the peers.
const baseline = "respire-nofiller"

// colors gives every client the same colour in every chart.
var colors = map[string]string{
	"respire-nofiller": "#d62728",
	"respire-filler":   "#ff7f0e",
	"respire-lease":    "#8c564b",
	"goredis":          "#1f77b4",
	"rueidis":          "#2ca02c",
	"redigo":           "#9467bd",
}

func colorOf(client string) string {
	if c, ok := colors[client]; ok {
		return c
	}
	return "#7f7f7f"
}

// Geometry of a figure, in SVG user units.
const (
	figW      = 980
	cols      = 2
	panelW    = figW / cols
	panelH    = 270
	headerH   = 78
	plotLeft  = 72
	plotRight = 18
	plotTop   = 30
	plotBot   = 48
	noteLineH = 15
)

type panel struct {
	title string
	m     metric
	pts   []point
}

func (d *dimension) panels() []panel {
	var ps []panel
	for _, g := range d.groups {
		for _, m := range g.metrics {
			ps = append(ps, panel{title: g.label + ": " + m.Name, m: m, pts: g.points})
		}
	}
	return ps
}

// clients returns the clients that have points, in the report's order.
func (d *dimension) clients() []string {
	seen := map[string]bool{}
	for _, g := range d.groups {
		for _, p := range g.points {
			seen[p.client] = true
		}
	}
	var out []string
	for _, c := range d.order {
		if seen[c] {
			out = append(out, c)
			delete(seen, c)
		}
	}
	var rest []string
	for c := range seen {
		rest = append(rest, c)
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// svg draws the dimension: a title, a legend, one panel per group and
// metric (log-scale x axis, one line per client), and the note.
func (d *dimension) svg() string {
	ps := d.panels()
	rows := (len(ps) + cols - 1) / cols
	noteLines := wrap(d.note, 150)
	h := headerH + rows*panelH + 16 + len(noteLines)*noteLineH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", figW, h, figW, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", figW, h)
	fmt.Fprintf(&b, `<text x="%d" y="26" font-size="17" font-weight="bold" text-anchor="middle">%s</text>`+"\n", figW/2, esc(d.title))
	// Legend.
	cs := d.clients()
	x := (figW - len(cs)*150) / 2
	for _, c := range cs {
		fmt.Fprintf(&b, `<line x1="%d" y1="50" x2="%d" y2="50" stroke="%s" stroke-width="%s"/>`, x, x+26, colorOf(c), width(c))
		fmt.Fprintf(&b, `<circle cx="%d" cy="50" r="3.5" fill="%s"/>`, x+13, colorOf(c))
		fmt.Fprintf(&b, `<text x="%d" y="54">%s</text>`+"\n", x+32, esc(c))
		x += 150
	}
	fmt.Fprintf(&b, `<text x="%d" y="70" text-anchor="middle" fill="#555">x axis: %s (log scale)</text>`+"\n", figW/2, esc(d.xLabel))
	for i, p := range ps {
		d.drawPanel(&b, p, (i%cols)*panelW, headerH+(i/cols)*panelH, cs)
	}
	y := headerH + rows*panelH + 14
	for _, l := range noteLines {
		fmt.Fprintf(&b, `<text x="12" y="%d" font-size="11" fill="#444">%s</text>`+"\n", y, esc(l))
		y += noteLineH
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func width(client string) string {
	if client == baseline {
		return "3"
	}
	return "1.8"
}

func (d *dimension) drawPanel(b *strings.Builder, p panel, ox, oy int, cs []string) {
	x0, x1 := float64(ox+plotLeft), float64(ox+panelW-plotRight)
	y0, y1 := float64(oy+panelH-plotBot), float64(oy+plotTop) // y0 is the bottom
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" font-weight="bold" text-anchor="middle">%s</text>`+"\n", ox+panelW/2, oy+18, esc(p.title))
	var xs, ys []float64
	for _, pt := range p.pts {
		if v := p.m.Get(pt.m, pt.x); v > 0 {
			xs = append(xs, pt.x)
			ys = append(ys, v)
		}
	}
	if len(xs) == 0 {
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">no data</text>`+"\n", ox+panelW/2, oy+panelH/2)
		return
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	lx0, lx1 := math.Log(xs[0]), math.Log(xs[len(xs)-1])
	if lx1 == lx0 {
		lx0, lx1 = lx0-1, lx1+1
	}
	px := func(x float64) float64 { return x0 + (math.Log(x)-lx0)/(lx1-lx0)*(x1-x0) }
	sy := newScale(ys)
	py := func(v float64) float64 { return y0 - sy.pos(v)*(y0-y1) }

	// Frame, grid and ticks.
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#999"/>`+"\n", x0, y1, x1-x0, y0-y1)
	for _, t := range sy.ticks {
		y := py(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, x0, y, x1, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" font-size="11">%s</text>`+"\n", x0-5, y+4, siLabel(t))
	}
	for _, x := range xs {
		X := px(x)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, X, y0, X, y1)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11">%s</text>`+"\n", X, y0+15, esc(d.xFmt(x)))
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11" fill="#333">%s</text>`+"\n", (x0+x1)/2, y0+33, esc(d.xLabel))
	yl := p.m.Unit
	if sy.log {
		yl += " (log)"
	}
	fmt.Fprintf(b, `<text transform="translate(%d %.1f) rotate(-90)" text-anchor="middle" font-size="11" fill="#333">%s</text>`+"\n", ox+14, (y0+y1)/2, esc(yl))

	// One line per client, Respire last so that it is drawn on top.
	order := slices.Clone(cs)
	if i := slices.Index(order, baseline); i >= 0 {
		order = append(slices.Delete(order, i, i+1), baseline)
	}
	for _, c := range order {
		var line []string
		var dots strings.Builder
		pts := slices.Clone(p.pts)
		slices.SortFunc(pts, func(a, b point) int { return cmpFloat(a.x, b.x) })
		for _, pt := range pts {
			v := p.m.Get(pt.m, pt.x)
			if pt.client != c || v <= 0 {
				continue
			}
			X, Y := px(pt.x), py(v)
			line = append(line, fmt.Sprintf("%.1f,%.1f", X, Y))
			fmt.Fprintf(&dots, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s %s: %s</title></circle>`, X, Y, colorOf(c), esc(c), esc(d.xFmt(pt.x)), siLabel(v))
		}
		if len(line) == 0 {
			continue
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%s"/>`, strings.Join(line, " "), colorOf(c), width(c))
		b.WriteString(dots.String())
		b.WriteString("\n")
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// scale maps values onto [0, 1]: linear from 0 with round ticks, or, when
// the values span more than a factor of 10, logarithmic.
type scale struct {
	log    bool
	lo, hi float64 // linear: the range; log: log10 of it
	ticks  []float64
}

func newScale(vs []float64) scale {
	lo, hi := slices.Min(vs), slices.Max(vs)
	if hi/lo > 10 {
		// A little room beyond the data, ticks at 1, 2 and 5 times powers
		// of ten (only the powers when the data span more than 3 decades).
		s := scale{log: true, lo: math.Log10(lo) - 0.06, hi: math.Log10(hi) + 0.06}
		steps := []float64{1, 2, 5}
		if s.hi-s.lo > 3 {
			steps = []float64{1}
		}
		for e := math.Floor(s.lo); e <= math.Ceil(s.hi); e++ {
			for _, m := range steps {
				if l := math.Log10(m * math.Pow(10, e)); l >= s.lo && l <= s.hi {
					s.ticks = append(s.ticks, m*math.Pow(10, e))
				}
			}
		}
		return s
	}
	step := niceStep(hi / 5)
	s := scale{lo: 0, hi: math.Ceil(hi/step) * step}
	for t := 0.0; t <= s.hi+step/2; t += step {
		s.ticks = append(s.ticks, t)
	}
	return s
}

func (s scale) pos(v float64) float64 {
	if s.log {
		return (math.Log10(v) - s.lo) / (s.hi - s.lo)
	}
	return (v - s.lo) / (s.hi - s.lo)
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// wrap breaks s into lines of at most n bytes at spaces.
func wrap(s string, n int) []string {
	var lines []string
	var cur string
	for _, w := range strings.Fields(s) {
		if cur != "" && len(cur)+1+len(w) > n {
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
	return lines
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func esc(s string) string { return xmlEscaper.Replace(s) }

// markdown writes the figures behind the chart: one table per panel, a
// row per x, a column per client and Respire's ratio to the best peer.
func (d *dimension) markdown(w io.Writer) {
	cs := d.clients()
	fmt.Fprintf(w, "#### %s\n\n%s\n\n", d.title, d.note)
	for _, p := range d.panels() {
		fmt.Fprintf(w, "%s (%s):\n\n", p.title, betterWord(p.m))
		fmt.Fprintf(w, "| %s | %s | %s ÷ best peer |\n", d.xLabel, strings.Join(cs, " | "), baseline)
		fmt.Fprintf(w, "|---|%s--:|\n", strings.Repeat("--:|", len(cs)))
		var xs []float64
		for _, pt := range p.pts {
			xs = append(xs, pt.x)
		}
		slices.Sort(xs)
		for _, x := range slices.Compact(xs) {
			row := []string{d.xFmt(x)}
			var mine, best float64
			for _, c := range cs {
				v, ok := valueAt(p, c, x)
				if !ok {
					row = append(row, "–")
					continue
				}
				row = append(row, siLabel(v))
				switch {
				case c == baseline:
					mine = v
				case best == 0 || (p.m.Lower && v < best) || (!p.m.Lower && v > best):
					best = v
				}
			}
			ratio := "–"
			if mine > 0 && best > 0 {
				ratio = fmt.Sprintf("%.2f", mine/best)
			}
			fmt.Fprintf(w, "| %s | %s |\n", strings.Join(row, " | "), ratio)
		}
		fmt.Fprintln(w)
	}
}

func betterWord(m metric) string {
	if m.Lower {
		return "lower is better; a ratio below 1 is Respire ahead"
	}
	return "higher is better; a ratio above 1 is Respire ahead"
}

func valueAt(p panel, client string, x float64) (float64, bool) {
	for _, pt := range p.pts {
		if pt.client == client && pt.x == x {
			v := p.m.Get(pt.m, pt.x)
			return v, v > 0
		}
	}
	return 0, false
}

// summary writes one table per group: a row per x, and for each metric
// Respire's figure and its ratio to the best peer, naming that peer.
func (d *dimension) summary(w io.Writer) {
	cs := d.clients()
	fmt.Fprintf(w, "#### %s\n\n", d.title)
	for _, g := range d.groups {
		fmt.Fprintf(w, "%s (Respire's figure, then Respire ÷ the best peer and which peer that is):\n\n| %s |", g.label, d.xLabel)
		for _, m := range g.metrics {
			fmt.Fprintf(w, " %s | ÷ best peer |", m.Name)
		}
		fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("--:|--:|", len(g.metrics)))
		var xs []float64
		for _, pt := range g.points {
			xs = append(xs, pt.x)
		}
		slices.Sort(xs)
		for _, x := range slices.Compact(xs) {
			fmt.Fprintf(w, "| %s |", d.xFmt(x))
			for _, m := range g.metrics {
				p := panel{m: m, pts: g.points}
				mine, ok := valueAt(p, baseline, x)
				var best float64
				var who string
				for _, c := range cs {
					if v, ok := valueAt(p, c, x); ok && c != baseline && (best == 0 || (m.Lower && v < best) || (!m.Lower && v > best)) {
						best, who = v, c
					}
				}
				if !ok || best == 0 {
					fmt.Fprint(w, " – | – |")
					continue
				}
				fmt.Fprintf(w, " %s | %.2f (%s) |", siLabel(mine), mine/best, who)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
}
