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
	rn, err := writeRateCharts(dir, r)
	if err != nil {
		return nil, err
	}
	mn, err := writeMsgSizeChart(dir, r)
	if err != nil {
		return nil, err
	}
	return append(append(names, rn...), mn...), nil
}

// writeRateCharts writes, per forwarding-rate setup, rate-<setup>.svg:
// throughput by frame size (Mb/s of the frames as carried, without FCS),
// max rate and zero-loss rate, patch and no patch; it returns the file
// names.
func writeRateCharts(dir string, r *Results) ([]string, error) {
	if r.Rate == nil {
		return nil, nil
	}
	var names []string
	for _, s := range r.RateSetups {
		p := plot.New()
		p.Title.Text = "forwarding rate through " + s.Name + ", patch vs no patch"
		p.X.Label.Text = "frame size, bytes (RFC 2544, FCS included)"
		p.Y.Label.Text = "Mb/s (frames without FCS)"
		p.Y.Min = 0
		for i, se := range []struct{ label, metric, role string }{
			{"max rate, patch", "max_rate", RolePatch}, {"max rate, no patch", "max_rate", RoleNoPatch},
			{"zero loss, patch", "zero_loss", RolePatch}, {"zero loss, no patch", "zero_loss", RoleNoPatch},
		} {
			var xy plotter.XYs
			for _, size := range r.Rate.Sizes {
				for _, c := range r.RateCells {
					if c.Setup == s.Name && c.Metric == se.metric && c.Role == se.role && c.Size == size && !c.NA {
						xy = append(xy, plotter.XY{X: float64(size), Y: c.Summary.Mean * float64(size-4) * 8 / 1e6})
					}
				}
			}
			if len(xy) == 0 {
				continue
			}
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, fmt.Errorf("chart rate-%s.svg: %w", s.Name, err)
			}
			l.Color, pts.Color = palette[i%len(palette)], palette[i%len(palette)]
			if i%2 == 1 {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			p.Add(l, pts)
			p.Legend.Add(se.label, l, pts)
		}
		p.Legend.Top = true
		p.Legend.Left = true
		file := "rate-" + s.Name + ".svg"
		path := filepath.Join(dir, file)
		if err := p.Save(6*vg.Inch, 4*vg.Inch, path); err != nil {
			return nil, fmt.Errorf("chart %s: %w", path, err)
		}
		names = append(names, file)
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
