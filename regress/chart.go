package regress

import (
	"fmt"
	"image/color"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WriteCharts writes, per setup, <setup>-throughput.svg (mean Mb/s per
// row and column, patch beside no patch) and <setup>-cpu.svg (system and
// interrupts %, patch beside no patch) into dir, and returns the file
// names.
func WriteCharts(dir string, r *Results) ([]string, error) {
	var names []string
	for _, s := range r.Setups {
		var groups []string
		for _, row := range s.Rows {
			for _, promisc := range []bool{true, false} {
				groups = append(groups, row+" "+colName(promisc))
			}
		}
		mean := func(metric, role, group string) float64 {
			for _, c := range r.Cells {
				if c.Setup == s.Name && c.Metric == metric && c.Role == role && c.Row+" "+colName(c.Promisc) == group && !c.NA {
					return c.Summary.Mean
				}
			}
			return 0
		}
		type series struct {
			label  string
			metric string
			role   string
		}
		for _, ch := range []struct {
			file, title, ylabel string
			series              []series
		}{
			{s.Name + "-throughput.svg", s.Name + ": throughput, patch vs no patch", "Mb/s", []series{
				{"patch", "throughput", RolePatch}, {"no patch", "throughput", RoleNoPatch}}},
			{s.Name + "-cpu.svg", s.Name + ": CPU, whole machine", "% of all CPUs", []series{
				{"system, patch", "system", RolePatch}, {"system, no patch", "system", RoleNoPatch},
				{"interrupts, patch", "interrupts", RolePatch}, {"interrupts, no patch", "interrupts", RoleNoPatch}}},
		} {
			p := plot.New()
			p.Title.Text = ch.title
			p.Y.Label.Text = ch.ylabel
			p.Y.Min = 0
			w := vg.Points(float64(60) / float64(len(ch.series)))
			for i, se := range ch.series {
				var v plotter.Values
				for _, g := range groups {
					v = append(v, mean(se.metric, se.role, g))
				}
				bars, err := plotter.NewBarChart(v, w)
				if err != nil {
					return nil, fmt.Errorf("chart %s: %w", ch.file, err)
				}
				bars.Color = palette[i%len(palette)]
				bars.LineStyle.Width = 0
				bars.Offset = w * vg.Length(float64(i)-float64(len(ch.series)-1)/2)
				p.Add(bars)
				p.Legend.Add(se.label, bars)
			}
			p.Legend.Top = true
			p.NominalX(groups...)
			path := filepath.Join(dir, ch.file)
			if err := p.Save(vg.Length(110*len(groups))+2*vg.Inch, 4*vg.Inch, path); err != nil {
				return nil, fmt.Errorf("chart %s: %w", path, err)
			}
			names = append(names, ch.file)
		}
	}
	return names, nil
}

// palette colours the bar series: patch dark, no patch light.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x4e, B: 0x9a, A: 0xff},
	color.RGBA{R: 0x8f, G: 0xb4, B: 0xe8, A: 0xff},
	color.RGBA{R: 0xb0, G: 0x3a, B: 0x2e, A: 0xff},
	color.RGBA{R: 0xf0, G: 0xa8, B: 0x9c, A: 0xff},
}
