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

	"github.com/swctl/swctl/internal/stats"
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

// chartCell is one bar or point: a cell's summary and its marks.
type chartCell struct {
	// S summarises the runs; S.N 0 = not measured (nothing drawn).
	S stats.Summary
	// Marked flags a patch cell that differs significantly from no patch.
	Marked bool
}

// chart is c's bar or point: nothing drawn when not measured (nil: no
// such cell), a patch cell marked when significant.
func (c *RoleCell) chart() chartCell {
	if c == nil || c.NA {
		return chartCell{}
	}
	return chartCell{S: c.Summary, Marked: c.Role == RolePatch && c.Significant}
}

// scaled is c with its figures multiplied by k (frames/s to Mb/s).
func (c chartCell) scaled(k float64) chartCell {
	c.S.Mean, c.S.Min, c.S.Max, c.S.Median = c.S.Mean*k, c.S.Min*k, c.S.Max*k, c.S.Median*k
	return c
}

// chartSeries is one legend entry: patch or no patch of one figure.
type chartSeries struct {
	// Label is the legend text.
	Label string
	// X are the points' x values (line charts; bar charts use the group
	// index).
	X []float64
	// Cells are the bars or points, one per group or x.
	Cells []chartCell
}

// spread draws the whiskers (min to max over runs) of cells at x,
// shifted by offset, and a '*' above each marked one.
type spread struct {
	// x are the cells' x values.
	x []float64
	// cells are the bars or points.
	cells []chartCell
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
		if cell.S.N == 0 {
			continue
		}
		x := trX(s.x[i]) + s.offset
		lo, hi := trY(cell.S.Min), trY(cell.S.Max)
		c.StrokeLine2(s.line, x, lo, x, hi)
		c.StrokeLine2(s.line, x-whiskerCap, lo, x+whiskerCap, lo)
		c.StrokeLine2(s.line, x-whiskerCap, hi, x+whiskerCap, hi)
		if cell.Marked {
			c.FillText(star, vg.Point{X: x, Y: hi + 1}, "*")
		}
	}
}

// DataRange implements plot.DataRanger: the whiskers, with a tenth more
// on top for the marks.
func (s spread) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), 0, 0
	for i, c := range s.cells {
		if c.S.N == 0 {
			continue
		}
		xmin, xmax = math.Min(xmin, s.x[i]), math.Max(xmax, s.x[i])
		ymin, ymax = math.Min(ymin, c.S.Min), math.Max(ymax, c.S.Max*1.1)
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
			v[g] = c.S.Mean
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
// with a tick at every x.
func lineChart(title, xlabel, ylabel string, logX bool, series []chartSeries) (*plot.Plot, error) {
	p := newChart(title, xlabel, ylabel)
	var ticks []plot.Tick
	for i, se := range series {
		for _, x := range se.X {
			if !slices.ContainsFunc(ticks, func(t plot.Tick) bool { return t.Value == x }) {
				ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', -1, 64)})
			}
		}
		var xy plotter.XYs
		for j, c := range se.Cells {
			if c.S.N > 0 {
				xy = append(xy, plotter.XY{X: se.X[j], Y: c.S.Mean})
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
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
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
			series := roleSeries(ch.metrics, func(i int, role string) chartSeries {
				var cs chartSeries
				for _, at := range places {
					at.Metric, at.Role = ch.metrics[i], role
					cs.Cells = append(cs.Cells, findCell(r.Cells, at).chart())
				}
				return cs
			})
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

// roleSeries is a series per figure and role, patch first, labelled
// "figure, role", or the role alone when there is one figure; series
// gives the cells (and x) of figure i and role.
func roleSeries(figures []string, series func(i int, role string) chartSeries) []chartSeries {
	var out []chartSeries
	for i, f := range figures {
		for _, role := range bothRoles {
			s := series(i, role)
			s.Label = role
			if len(figures) > 1 {
				s.Label = f + ", " + role
			}
			out = append(out, s)
		}
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
		metrics := []string{"max_rate", "zero_loss"}
		series := roleSeries([]string{"max rate", "zero loss"}, func(i int, role string) chartSeries {
			return sizeSeries("", r.Rate.Sizes, func(size int) chartCell {
				return findCell(r.RateCells, RoleCell{Setup: s.Name, Metric: metrics[i], Size: size, Role: role}).chart().scaled(float64(size-4) * 8 / 1e6)
			})
		})
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
	series := roleSeries([]string{"throughput"}, func(_ int, role string) chartSeries {
		var cs chartSeries
		for _, row := range groups {
			cs.Cells = append(cs.Cells, findCell(r.BulkCells, RoleCell{Setup: BulkSetup, Row: row, Metric: "throughput", Role: role}).chart())
		}
		return cs
	})
	p, w, err := barChart("bulk transfer across "+BulkSetup+", patch vs no patch", "test (UDP: received)", "throughput, Mb/s", groups, series)
	return writeChart(dir, "bulk-"+BulkSetup+".svg", p, w, r.Alpha, err)
}

// sizeSeries is the series label of a line chart over sizes, with the
// cell cell gives at each size.
func sizeSeries(label string, sizes []int, cell func(size int) chartCell) chartSeries {
	cs := chartSeries{Label: label}
	for _, size := range sizes {
		cs.X, cs.Cells = append(cs.X, float64(size)), append(cs.Cells, cell(size))
	}
	return cs
}

// palette colours the series: patch dark, no patch light.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x4e, B: 0x9a, A: 0xff},
	color.RGBA{R: 0x8f, G: 0xb4, B: 0xe8, A: 0xff},
	color.RGBA{R: 0xb0, G: 0x3a, B: 0x2e, A: 0xff},
	color.RGBA{R: 0xf0, G: 0xa8, B: 0x9c, A: 0xff},
}
