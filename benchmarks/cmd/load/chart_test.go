package main

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// TestChartSVG: the chart is well-formed XML with a panel per shape, a bar
// per client and the ratio to the baseline client.
func TestChartSVG(t *testing.T) {
	rep := &Report{Meta: Meta{Shapes: []string{"get-1k-seq", "incr-conc64"}, Rounds: 1, Duration: "1s"}}
	for _, cell := range []struct {
		client, shape string
		ops           float64
	}{
		{baseline, "get-1k-seq", 40000}, {"goredis", "get-1k-seq", 16000},
		{baseline, "incr-conc64", 400000}, {"rueidis", "incr-conc64", 200000}, {ceilingName, "incr-conc64", 100000},
	} {
		c := rep.cell(cell.client, cell.shape)
		c.Rounds = append(c.Rounds, Measurement{OpsPerSec: cell.ops})
	}
	rep.cell("redigo", "incr-conc64").Error = "refused <here>"
	rep.summarize()
	var out strings.Builder
	rep.renderSVG(&out)
	svg := out.String()
	d := xml.NewDecoder(strings.NewReader(svg))
	rects := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	if rects != 1+5 { // the background and one bar per measured cell
		t.Errorf("%d rects, want 6", rects)
	}
	for _, want := range []string{">get-1k-seq<", ">incr-conc64<", "16k  ×0.40", "200k  ×0.50", ">redis-benchmark<", "40k  ×1.00"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if strings.Contains(svg, "redigo") {
		t.Error("a failed cell has a bar")
	}
}
