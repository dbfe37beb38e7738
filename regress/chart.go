package regress

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The charts share one form: a bar or a point is a cell's mean, a
// whisker over it spans the runs (min to max), a '*' above a patch
// whisker marks a significant difference as the tables do, every axis
// names its unit, and the legend sits in a strip right of the plot,
// where it covers nothing.

// chartSeries is one legend entry: patch or no patch of one figure.
type chartSeries struct {
	// Label is the legend text.
	Label string
	// X are the points' x values (line charts; bar charts use the group
	// index).
	X []float64
	// Cells are the bars or points, one per group or x: a cell's summary
	// (Summary.N 0 = not measured, nothing drawn), a patch cell marked
	// when it differs significantly from no patch.
	Cells []RoleCell
}

// spread draws the whiskers (min to max over runs) of cells at x,
// shifted by offset, and a '*' above each marked one.
type spread struct {
	// x are the cells' x values.
	x []float64
	// cells are the bars or points.
	cells []RoleCell
	// offset shifts the whiskers right, to the centre of their bars.
	offset vg.Length
	// line is the whiskers' style.
	line draw.LineStyle
}

// whiskerCap is half a whisker's cap; whiskerWidth is a whisker's line
// width in points.
const (
	whiskerCap   = 3
	whiskerWidth = 0.75
)

// Plot implements plot.Plotter.
func (s spread) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	star := plot.NewLegend().TextStyle // the significance mark's
	star.XAlign, star.YAlign = draw.XCenter, draw.YBottom
	for i, cell := range s.cells {
		if cell.Summary.N == 0 {
			continue
		}
		x := trX(s.x[i]) + s.offset
		lo, hi := trY(cell.Summary.Min), trY(cell.Summary.Max)
		c.StrokeLine2(s.line, x, lo, x, hi)
		c.StrokeLine2(s.line, x-whiskerCap, lo, x+whiskerCap, lo)
		c.StrokeLine2(s.line, x-whiskerCap, hi, x+whiskerCap, hi)
		if cell.Role == RolePatch && cell.Significant {
			c.FillText(star, vg.Point{X: x, Y: hi + 1}, "*")
		}
	}
}

// DataRange implements plot.DataRanger: the whiskers, with a tenth more
// on top for the marks.
func (s spread) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), 0, 0
	for i, c := range s.cells {
		if c.Summary.N == 0 {
			continue
		}
		xmin, xmax = math.Min(xmin, s.x[i]), math.Max(xmax, s.x[i])
		ymin, ymax = math.Min(ymin, c.Summary.Min), math.Max(ymax, c.Summary.Max*1.1)
	}
	if xmin > xmax {
		return 0, 0, 0, 0
	}
	return xmin, xmax, ymin, ymax
}

// barChart is a grouped bar chart: per group (a nominal x), one bar per
// series, a whisker on each; it also returns the plot's width.
func barChart(title, xlabel, ylabel string, groups []string, series []chartSeries) (*plot.Plot, vg.Length, error) {
	p := newChart(title, xlabel, ylabel)
	w := vg.Points(60 / float64(len(series)))
	x := make([]float64, len(groups))
	for i := range x {
		x[i] = float64(i)
	}
	for i, se := range series {
		v := make(plotter.Values, len(groups))
		for g, c := range se.Cells {
			v[g] = c.Summary.Mean
		}
		bars, err := plotter.NewBarChart(v, w)
		if err != nil {
			return nil, 0, err
		}
		bars.Color = palette[i%len(palette)]
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(float64(i)-float64(len(series)-1)/2)
		p.Add(bars, spread{x: x, cells: se.Cells, offset: bars.Offset, line: draw.LineStyle{Color: color.Gray{Y: 0x33}, Width: vg.Points(whiskerWidth)}})
		p.Legend.Add(se.Label, bars)
	}
	p.NominalX(groups...)
	// Half a group of room at either end keeps the outer bars and labels
	// inside the picture.
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	return p, vg.Length(110*len(groups)) + 1.5*vg.Inch, nil
}

// lineChart is a chart of points joined by lines, one line per series
// (no patch dashed), a whisker on each point; logX puts x on a log scale
// with a tick at every x (the series share their x, as roleSeries makes
// them).
func lineChart(title, xlabel, ylabel string, logX bool, series []chartSeries) (*plot.Plot, error) {
	p := newChart(title, xlabel, ylabel)
	for i, se := range series {
		var xy plotter.XYs
		for j, c := range se.Cells {
			if c.Summary.N > 0 {
				xy = append(xy, plotter.XY{X: se.X[j], Y: c.Summary.Mean})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		l.Color, pts.Color = palette[i%len(palette)], palette[i%len(palette)]
		if i%2 == 1 {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		// Whiskers of the series at one x sit side by side.
		off := vg.Points(2 * (float64(i) - float64(len(series)-1)/2))
		ws := draw.LineStyle{Color: l.Color, Width: vg.Points(whiskerWidth)}
		p.Add(l, pts, spread{x: se.X, cells: se.Cells, offset: off, line: ws}) // spread skips the cells not measured
		p.Legend.Add(se.Label, l, pts)
	}
	if logX {
		var ticks plot.ConstantTicks
		for _, x := range series[0].X {
			ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', -1, 64)})
		}
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = ticks
	}
	return p, nil
}

// newChart is a plot with title and axis labels (units included), its y
// axis starting at 0 (writeChart adds the legend's note on whiskers and
// marks).
func newChart(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	return p
}

// chartNote is the legend's explanation of the whiskers and the mark.
func chartNote(alpha float64) string {
	return fmt.Sprintf("whisker: min-max of runs; * p < %.3g", alpha)
}

// legendGap is the space between the plot and the legend strip, and
// the picture's margin.
const legendGap = vg.Length(8)

// writeChart saves the chart p (unless making it failed with err) as
// file in dir, an SVG at least w wide and 4 in high, and returns the
// file's name: the plot on the left, its legend (and the note on whiskers
// and marks) in a strip on the right, so the legend never covers data;
// the plot is widened when its title needs it.
func writeChart(dir, file string, p *plot.Plot, w vg.Length, alpha float64, err error) ([]string, error) {
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", file, err)
	}
	path := filepath.Join(dir, file)
	leg := p.Legend
	p.Legend = plot.NewLegend()
	leg.Add(chartNote(alpha))
	leg.Top, leg.Left, leg.Padding = true, true, vg.Points(3)
	lw := leg.Rectangle(draw.Canvas{}).Size().X + 2*legendGap
	w = max(w, p.Title.TextStyle.Rectangle(p.Title.Text).Size().X+2*legendGap)
	c, err := draw.NewFormattedCanvas(legendGap+w+lw, 4*vg.Inch, "svg")
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", path, err)
	}
	dc := draw.New(c)
	// A margin all round: a font's ascent reaches above its glyphs.
	p.Draw(draw.Crop(dc, legendGap, -lw, legendGap, -legendGap))
	leg.Draw(draw.Crop(dc, legendGap+w+legendGap, -legendGap, legendGap, -legendGap))
	f, err := os.Create(path)
	if err == nil {
		_, err = c.WriteTo(f)
		err = cmp.Or(err, f.Close())
	}
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", path, err)
	}
	return []string{file}, nil
}

// WriteCharts writes every chart of r into dir and returns the file
// names: per promisc setup, <setup>-throughput.svg (Mb/s per row and
// column) and <setup>-cpu.svg (system and interrupts %), then the
// forwarding-rate, message-size and bulk charts.
func WriteCharts(dir string, r *Results) ([]string, error) {
	var names []string
	for _, s := range r.Setups {
		var groups []string
		var places []RoleCell // the groups' cells
		for _, row := range s.Rows {
			for _, promisc := range []bool{true, false} {
				groups = append(groups, row+" "+colName(promisc))
				places = append(places, RoleCell{Setup: s.Name, Row: row, Promisc: promisc})
			}
		}
		for _, ch := range []struct {
			name, title, ylabel string
			// metrics are the figures, also their legend labels.
			metrics []string
		}{
			{"throughput", ": throughput, patch vs no patch", "throughput, Mb/s", []string{"throughput"}},
			{"cpu", ": CPU, whole machine", "CPU, % of all CPUs", []string{"system", "interrupts"}},
		} {
			series := roleSeries(r.Cells, places, ch.metrics...)
			p, w, err := barChart(s.Name+ch.title, "row and column (iperf3 direction; PROMISC or -PROMISC)", ch.ylabel, groups, series)
			file, err := writeChart(dir, s.Name+"-"+ch.name+".svg", p, w, r.Alpha, err)
			if err != nil {
				return nil, err
			}
			names = append(names, file...)
		}
	}
	for _, write := range []func(string, *Results) ([]string, error){writeRateCharts, writeMsgSizeChart, writeBulkChart} {
		more, err := write(dir, r)
		if err != nil {
			return nil, err
		}
		names = append(names, more...)
	}
	return names, nil
}

// roleSeries is a series per metric and role, patch first, labelled
// "metric, role" (the metric's key, blanks for underscores), or the role
// alone when there is one metric: the cells of cells at places, their x
// the places' sizes (line charts).
func roleSeries(cells, places []RoleCell, metrics ...string) []chartSeries {
	var out []chartSeries
	for _, m := range metrics {
		for _, role := range bothRoles {
			s := chartSeries{Label: role}
			if len(metrics) > 1 {
				s.Label = strings.ReplaceAll(m, "_", " ") + ", " + role
			}
			for _, at := range places {
				at.Metric, at.Role = m, role
				var cell RoleCell // nothing drawn when not measured
				if c := findCell(cells, at); c != nil && !c.NA {
					cell = *c
				}
				s.X, s.Cells = append(s.X, float64(at.Size)), append(s.Cells, cell)
			}
			out = append(out, s)
		}
	}
	return out
}

// sizePlaces are the places of setup's cells at sizes, in order.
func sizePlaces(setup string, sizes []int) []RoleCell {
	var out []RoleCell
	for _, size := range sizes {
		out = append(out, RoleCell{Setup: setup, Size: size})
	}
	return out
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
		series := roleSeries(r.RateCells, sizePlaces(s.Name, r.Rate.Sizes), "max_rate", "zero_loss")
		for _, se := range series { // frames/s to Mb/s
			for i, size := range se.X {
				k, c := (size-4)*8/1e6, &se.Cells[i].Summary
				c.Mean, c.Min, c.Max, c.Median = c.Mean*k, c.Min*k, c.Max*k, c.Median*k
			}
		}
		p, err := lineChart("forwarding rate through "+s.Name+", patch vs no patch", "frame size, bytes (RFC 2544, FCS included)", "throughput, Mb/s (frames without FCS)", false, series)
		file, err := writeChart(dir, "rate-"+s.Name+".svg", p, 6*vg.Inch, r.Alpha, err)
		if err != nil {
			return nil, err
		}
		names = append(names, file...)
	}
	return names, nil
}

// writeBulkChart writes bulk-bridge0.svg: Mb/s per bulk row (the ratio
// row left out: no unit shared), patch beside no patch; it returns the
// file name, or none when the suite did not run.
func writeBulkChart(dir string, r *Results) ([]string, error) {
	if r.Bulk == nil || len(r.BulkCells) == 0 {
		return nil, nil
	}
	groups := slices.DeleteFunc(bulkRows(*r.Bulk), func(row string) bool { return row == BulkRatio })
	var places []RoleCell
	for _, row := range groups {
		places = append(places, RoleCell{Setup: BulkSetup, Row: row})
	}
	series := roleSeries(r.BulkCells, places, "throughput")
	p, w, err := barChart("bulk transfer across "+BulkSetup+", patch vs no patch", "test (UDP: received)", "throughput, Mb/s", groups, series)
	return writeChart(dir, "bulk-"+BulkSetup+".svg", p, w, r.Alpha, err)
}

// palette colours the series: patch dark, no patch light.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x4e, B: 0x9a, A: 0xff},
	color.RGBA{R: 0x8f, G: 0xb4, B: 0xe8, A: 0xff},
	color.RGBA{R: 0xb0, G: 0x3a, B: 0x2e, A: 0xff},
	color.RGBA{R: 0xf0, G: 0xa8, B: 0x9c, A: 0xff},
}
