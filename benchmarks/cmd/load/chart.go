package main

import (
	"fmt"
	"html"
	"io"
	"os"
	"strings"
)

// The chart: one panel per shape, a bar per client, its length the
// client's ops/s against the best of that shape (each panel has its own
// scale, since shapes differ by three orders of magnitude), labelled with
// the ops/s and the ratio to the baseline client. Panels run in two
// columns.

const (
	chartCols   = 2
	panelW      = 520 // width of one panel
	labelW      = 130 // client names left of the bars
	barH        = 14
	barGap      = 3
	panelHead   = 22
	panelGap    = 14
	chartMargin = 16
	chartTitleH = 46
)

// clientColor gives every client the same color in every panel.
var clientColor = map[string]string{
	"respire-nofiller": "#1f6fb4",
	"respire-filler":   "#7fb0dc",
	"respire-lease":    "#0b3d6b",
	"goredis":          "#d9534f",
	"rueidis":          "#f0ad4e",
	"redigo":           "#8e6bb8",
	ceilingName:        "#8c8c8c",
}

// writeSVG writes the chart of r's medians to path.
func (r *Report) writeSVG(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	r.renderSVG(f)
	return f.Close()
}

func (r *Report) renderSVG(w io.Writer) {
	type bar struct {
		client string
		ops    float64
	}
	var panels [][]bar
	maxBars := 0
	for _, shape := range r.Meta.Shapes {
		var bars []bar
		for _, c := range r.Cells {
			if c.Shape == shape && c.Error == "" && len(c.Rounds) > 0 {
				bars = append(bars, bar{c.Client, c.Median.OpsPerSec})
			}
		}
		panels = append(panels, bars)
		maxBars = max(maxBars, len(bars))
	}
	panelH := panelHead + maxBars*(barH+barGap) + panelGap
	rows := (len(panels) + chartCols - 1) / chartCols
	width := 2*chartMargin + chartCols*panelW + (chartCols-1)*panelGap
	height := chartTitleH + rows*panelH + chartMargin

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	m := r.Meta
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", chartMargin,
		esc(fmt.Sprintf("ops/s per shape and client (median of %d rounds x %s); ×: ratio to %s", m.Rounds, m.Duration, baseline)))
	fmt.Fprintf(&b, `<text x="%d" y="36" fill="#555">%s</text>`+"\n", chartMargin,
		esc(fmt.Sprintf("%s, %s, GOMAXPROCS=%d, load average at start %s; each panel has its own scale", m.Server, m.GoVersion, m.GOMAXPROCS, m.LoadAverage)))
	for i, bars := range panels {
		shape := m.Shapes[i]
		x0 := chartMargin + (i%chartCols)*(panelW+panelGap)
		y0 := chartTitleH + (i/chartCols)*panelH
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" font-weight="bold">%s</text>`+"\n", x0, y0+14, esc(shape))
		var top, base float64
		for _, br := range bars {
			top = max(top, br.ops)
			if br.client == baseline {
				base = br.ops
			}
		}
		barMax := float64(panelW - labelW - 120) // room for the label right of the bar
		for j, br := range bars {
			y := y0 + panelHead + j*(barH+barGap)
			wid := 0.0
			if top > 0 {
				wid = barMax * br.ops / top
			}
			color := clientColor[br.client]
			if color == "" {
				color = "#444444"
			}
			ratio := ""
			if base > 0 {
				ratio = fmt.Sprintf("  ×%.2f", br.ops/base)
			}
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`, x0+labelW-6, y+barH-3, esc(br.client))
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, x0+labelW, y, wid, barH, color)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s%s</text>`+"\n", float64(x0+labelW)+wid+4, y+barH-3, esc(opsLabel(br.ops)), esc(ratio))
		}
	}
	b.WriteString("</svg>\n")
	_, _ = io.WriteString(w, b.String())
}

// opsLabel prints ops/s compactly: 1.23M, 456k, 789.
func opsLabel(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func esc(s string) string { return html.EscapeString(s) }
