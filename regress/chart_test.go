package regress

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/swctl/swctl/internal/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// chartResults is a run with every chart: the promisc setups veth and
// bridge0 (4 runs, one significant difference), the recorded forwarding
// rates, message sizes and the bulk suite.
func chartResults(t *testing.T) *Results {
	t.Helper()
	r := &Results{Alpha: 0.05, Mode: "patch", Runs: 4, MinP: stats.MinP(4, 4), Trees: &Trees{}, Setups: []SetupSpec{Setups[0], Setups[2]}}
	for _, s := range r.Setups {
		for _, row := range s.Rows {
			for _, promisc := range []bool{true, false} {
				for run := 1; run <= 4; run++ {
					f := float64(run)
					eng := 20 + f
					r.Samples = append(r.Samples,
						Sample{Setup: s.Name, Row: row, Promisc: promisc, Role: RolePatch, Run: run, Mbps: 9000 + 100*f, CPU: CPUPercent{System: 40 + f, Interrupts: 10 + f}, EngineCPU: &eng},
						Sample{Setup: s.Name, Row: row, Promisc: promisc, Role: RoleNoPatch, Run: run, Mbps: 7000 + 300*f, CPU: CPUPercent{System: 50 + f, Interrupts: 12}, EngineCPU: &eng})
				}
			}
		}
	}
	r.Cells = Analyze(r.Setups, r.Samples, r.Alpha)
	setups, samples := classified(t)
	rc := DefaultRateConfig(true, false)
	r.Rate, r.RateSetups, r.RateCells = &rc, setups, AnalyzeRates(setups, rc.Sizes, samples, r.Alpha)
	mc := DefaultMsgSizeConfig(false, true)
	r.MsgSize = &mc
	for run := 1; run <= 4; run++ {
		for _, size := range mc.Sizes {
			for _, role := range []string{RolePatch, RoleNoPatch} {
				mbps := math.Min(float64(size)*(1+float64(run)/10), 20000)
				if role == RolePatch {
					mbps *= 1.5
				}
				r.MsgSizeSamples = append(r.MsgSizeSamples, MsgSizeSample{Size: size, Sample: Sample{Role: role, Run: run, Mbps: mbps, CPU: CPUPercent{System: 30}}})
			}
		}
	}
	r.MsgSizeCells = AnalyzeMsgSize(mc.Sizes, r.MsgSizeSamples, r.Alpha)
	bc := DefaultBulkConfig(false, false)
	r.Bulk = &bc
	for run := 1; run <= 4; run++ {
		f := float64(run)
		r.BulkSamples = append(r.BulkSamples, bulkInstance(RolePatch, run, 3000+f, 40, 1600+f, 1600-f, 60, 10)...)
		r.BulkSamples = append(r.BulkSamples, bulkInstance(RoleNoPatch, run, 3000-f, 40, 1400+f, 1400-f, 50, 100)...)
	}
	r.BulkCells = AnalyzeBulk(bc, r.BulkSamples, r.Alpha)
	return r
}

// TestChartsLayout writes every chart and parses each SVG: every text
// lies inside the view box, the legend box overlaps no bar, line or
// point, and every chart has whiskers and a significance mark.
func TestChartsLayout(t *testing.T) {
	dir := t.TempDir()
	names, err := WriteCharts(dir, chartResults(t))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.svg"))
	want := []string{"veth-throughput.svg", "veth-cpu.svg", "bridge0-throughput.svg", "bridge0-cpu.svg", "rate-direct.svg", "rate-bridge0.svg", "msgsize-bridge0.svg", "bulk-bridge0.svg"}
	if len(files) != len(names) || !slices.Equal(names, want) {
		t.Fatalf("charts %v (%d files), want %v", names, len(files), want)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			svg := parseSVG(t, f)
			// The recorded forwarding rates are one run a side: no mark.
			checkChart(t, svg, chartNote(0.05), !strings.HasPrefix(filepath.Base(f), "rate-"))
		})
	}
}

// TestChartCheckerCatches feeds the layout check an SVG whose legend
// covers a bar and whose label sticks out of the picture: the check must
// see both.
func TestChartCheckerCatches(t *testing.T) {
	bad := `<svg viewBox="0 0 100 100"><g transform="scale(1, -1) translate(0, -100)">
<path d="M10,0L10,80L30,80L30,0Z" style="fill:#1F4E9A" />
<text x="5" y="-70" transform="scale(1, -1)" style="font-size:10px">patch</text>
<text x="5" y="-60" transform="scale(1, -1)" style="font-size:10px">note</text>
<text x="90" y="-5" transform="scale(1, -1)" style="font-size:10px">Forward -PROMISC</text>
</g></svg>`
	path := filepath.Join(t.TempDir(), "bad.svg")
	os.WriteFile(path, []byte(bad), 0o644)
	svg := parseSVG(t, path)
	problems := chartProblems(svg, "note")
	for _, want := range []string{`text "Forward -PROMISC"`, "legend box"} {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("problems %q: want one about %s", problems, want)
		}
	}
}

// svgDoc is what the layout check reads from a chart.
type svgDoc struct {
	// view is the view box.
	view box
	// texts are the text elements with their boxes in view coordinates.
	texts []svgText
	// paths are the paths with their points in view coordinates and
	// their fill or stroke colour.
	paths []svgPath
}

type svgText struct {
	s   string
	box box
}

type svgPath struct {
	pts    [][2]float64
	closed bool
	color  string
	dashed bool
}

// box is an axis-aligned rectangle in view coordinates (y down).
type box struct{ x0, y0, x1, y1 float64 }

func (b box) overlaps(o box) bool {
	return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1
}

// contains says o lies inside b, give or take half a point of rounding.
func (b box) contains(o box) bool {
	return o.x0 >= b.x0-0.5 && o.x1 <= b.x1+0.5 && o.y0 >= b.y0-0.5 && o.y1 <= b.y1+0.5
}

func (b box) union(o box) box {
	return box{math.Min(b.x0, o.x0), math.Min(b.y0, o.y0), math.Max(b.x1, o.x1), math.Max(b.y1, o.y1)}
}

// affine is an SVG transform matrix (a b c d e f).
type affine [6]float64

var identity = affine{1, 0, 0, 1, 0, 0}

func (m affine) then(n affine) affine { // m applied after n: m*n
	return affine{
		m[0]*n[0] + m[2]*n[1], m[1]*n[0] + m[3]*n[1],
		m[0]*n[2] + m[2]*n[3], m[1]*n[2] + m[3]*n[3],
		m[0]*n[4] + m[2]*n[5] + m[4], m[1]*n[4] + m[3]*n[5] + m[5],
	}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m[0]*x + m[2]*y + m[4], m[1]*x + m[3]*y + m[5]
}

var transformRE = regexp.MustCompile(`(\w+)\(([^)]*)\)`)

// parseTransform reads translate, scale and rotate lists.
func parseTransform(s string) (affine, error) {
	m := identity
	for _, sm := range transformRE.FindAllStringSubmatch(s, -1) {
		var a []float64
		for _, f := range strings.FieldsFunc(sm[2], func(r rune) bool { return r == ',' || r == ' ' }) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return m, fmt.Errorf("transform %q: %v", s, err)
			}
			a = append(a, v)
		}
		var n affine
		switch {
		case sm[1] == "translate" && len(a) == 2:
			n = affine{1, 0, 0, 1, a[0], a[1]}
		case sm[1] == "scale" && len(a) == 2:
			n = affine{a[0], 0, 0, a[1], 0, 0}
		case sm[1] == "rotate" && len(a) == 1:
			r := a[0] * math.Pi / 180
			n = affine{math.Cos(r), math.Sin(r), -math.Sin(r), math.Cos(r), 0, 0}
		default:
			return m, fmt.Errorf("transform %q: %s with %d arguments not read", s, sm[1], len(a))
		}
		m = m.then(n)
	}
	return m, nil
}

var (
	numRE   = regexp.MustCompile(`-?[0-9.]+(?:e-?[0-9]+)?`)
	cmdRE   = regexp.MustCompile(`[MLAZ][^MLAZ]*`)
	fsRE    = regexp.MustCompile(`font-size:([0-9.]+)px`)
	colorRE = regexp.MustCompile(`(fill|stroke):(#[0-9A-Fa-f]{6})`)
)

// parseSVG reads the view box, texts and paths of the SVG at path,
// resolving nested transforms. A text's box comes from the metrics of
// gonum plot's default font at the text's size: its width, its ascent
// above the baseline and its descent below.
func parseSVG(t *testing.T, path string) svgDoc {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var doc svgDoc
	stack := []affine{identity}
	d := xml.NewDecoder(f)
	var text *xml.StartElement
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v", path, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			m, err := parseTransform(attr["transform"])
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			cur := stack[len(stack)-1].then(m)
			stack = append(stack, cur)
			switch e.Name.Local {
			case "svg":
				v := numRE.FindAllString(attr["viewBox"], -1)
				if len(v) != 4 {
					t.Fatalf("%s: viewBox %q", path, attr["viewBox"])
				}
				x, _ := strconv.ParseFloat(v[0], 64)
				y, _ := strconv.ParseFloat(v[1], 64)
				w, _ := strconv.ParseFloat(v[2], 64)
				h, _ := strconv.ParseFloat(v[3], 64)
				doc.view = box{x, y, x + w, y + h}
			case "text":
				text = &e
			case "path":
				p := svgPath{dashed: strings.Contains(attr["style"], "dasharray")}
				if c := colorRE.FindStringSubmatch(attr["style"]); c != nil {
					p.color = strings.ToUpper(c[2])
				}
				for _, cmd := range cmdRE.FindAllString(attr["d"], -1) {
					nums := numRE.FindAllString(cmd, -1)
					if cmd[0] == 'Z' {
						p.closed = true
						continue
					}
					if cmd[0] == 'A' && len(nums) >= 7 {
						nums = nums[5:] // the arc's end point
					}
					for i := 0; i+1 < len(nums); i += 2 {
						x, _ := strconv.ParseFloat(nums[i], 64)
						y, _ := strconv.ParseFloat(nums[i+1], 64)
						px, py := cur.apply(x, y)
						p.pts = append(p.pts, [2]float64{px, py})
					}
				}
				doc.paths = append(doc.paths, p)
			}
		case xml.CharData:
			if text == nil {
				continue
			}
			var style, xs, ys string
			for _, a := range text.Attr {
				switch a.Name.Local {
				case "style":
					style = a.Value
				case "x":
					xs = a.Value
				case "y":
					ys = a.Value
				}
			}
			size := 10.0
			if sm := fsRE.FindStringSubmatch(style); sm != nil {
				size, _ = strconv.ParseFloat(sm[1], 64)
			}
			x, _ := strconv.ParseFloat(xs, 64)
			y, _ := strconv.ParseFloat(ys, 64)
			s := string(e)
			face := font.DefaultCache.Lookup(font.Font{Typeface: plot.DefaultFont.Typeface, Variant: plot.DefaultFont.Variant, Size: vg.Points(size)}, vg.Points(size))
			w, ext := face.Width(s).Points(), face.Extents()
			asc, desc := ext.Ascent.Points(), ext.Descent.Points()
			// The text's own coordinates: baseline at y, y down; corners
			// mapped through every transform.
			m := stack[len(stack)-1]
			var b box
			for i, c := range [][2]float64{{x, y - asc}, {x + w, y - asc}, {x, y + desc}, {x + w, y + desc}} {
				px, py := m.apply(c[0], c[1])
				if i == 0 {
					b = box{px, py, px, py}
				}
				b = b.union(box{px, py, px, py})
			}
			doc.texts = append(doc.texts, svgText{s: s, box: b})
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if e.Name.Local == "text" {
				text = nil
			}
		}
	}
	return doc
}

// thumbGap is the width of a legend's thumbnails (20 pt) and the space
// after them (12-point " ", 3 pt), plus a point for rounding.
const thumbGap = 24

// chartProblems lists what is wrong with a chart's layout: a text outside
// the view box, or a coloured bar, line or point crossing the legend box
// (the texts left-aligned with the legend's last line, note, and the
// thumbnails left of them).
func chartProblems(doc svgDoc, note string) []string {
	var out []string
	for _, tx := range doc.texts {
		if !doc.view.contains(tx.box) {
			out = append(out, fmt.Sprintf("text %q at %.1f,%.1f-%.1f,%.1f lies outside the view box %v", tx.s, tx.box.x0, tx.box.y0, tx.box.x1, tx.box.y1, doc.view))
		}
	}
	i := slices.IndexFunc(doc.texts, func(tx svgText) bool { return tx.s == note })
	if i < 0 {
		return append(out, fmt.Sprintf("no legend: no text %q", note))
	}
	leg := doc.texts[i].box
	for _, tx := range doc.texts {
		if math.Abs(tx.box.x0-leg.x0) < 0.5 {
			leg = leg.union(tx.box)
		}
	}
	leg.x0 -= thumbGap // the thumbnails and a space before the text
	for _, p := range doc.paths {
		if p.color == "" || p.color == "#FFFFFF" || p.color == "#000000" || len(p.pts) == 0 {
			continue // background, axes, ticks
		}
		pb := box{p.pts[0][0], p.pts[0][1], p.pts[0][0], p.pts[0][1]}
		for _, q := range p.pts {
			pb = pb.union(box{q[0], q[1], q[0], q[1]})
		}
		if leg.contains(pb) {
			continue // a thumbnail
		}
		for j := 0; j < len(p.pts); j++ {
			a, b := p.pts[j], p.pts[(j+1)%len(p.pts)]
			if j == len(p.pts)-1 && !p.closed {
				b = a
			}
			seg := box{math.Min(a[0], b[0]), math.Min(a[1], b[1]), math.Max(a[0], b[0]), math.Max(a[1], b[1])}
			if seg.x0 == seg.x1 {
				seg.x1 += 0.01
			}
			if seg.y0 == seg.y1 {
				seg.y1 += 0.01
			}
			if p.closed && leg.overlaps(pb) || !p.closed && leg.overlaps(seg) {
				out = append(out, fmt.Sprintf("legend box %v overlaps a %s path near %.1f,%.1f", leg, p.color, a[0], a[1]))
				break
			}
		}
	}
	return out
}

// checkChart fails t for every layout problem of doc and when it has no
// whisker, or no significance mark when marked is set.
func checkChart(t *testing.T, doc svgDoc, note string, marked bool) {
	t.Helper()
	for _, p := range chartProblems(doc, note) {
		t.Error(p)
	}
	if marked && !slices.ContainsFunc(doc.texts, func(tx svgText) bool { return tx.s == "*" }) {
		t.Errorf("no significance mark '*'")
	}
	whiskers := 0
	for _, p := range doc.paths {
		if len(p.pts) == 2 && p.pts[0][0] == p.pts[1][0] && p.color != "" && !p.closed {
			whiskers++
		}
	}
	if whiskers == 0 {
		t.Errorf("no whisker (a vertical line in a series' or the whiskers' grey)")
	}
}

// TestSummaryGolden checks report.md's opening summary on the run of
// every chart: per table, the cells where patch differs significantly
// from no patch and by how much, "none" for a table without any, then
// the forwarding rate's summary; and that report.md opens with it.
func TestSummaryGolden(t *testing.T) {
	r := chartResults(t)
	var b strings.Builder
	summaryMarkdown(&b, r)
	golden(t, "summary.golden", b.String())
	md := Markdown(r, nil)
	if !strings.HasPrefix(md, "# swctl regress report, ") || !strings.Contains(md, "\n\n## Summary\n\n") || strings.Index(md, "## Summary") > strings.Index(md, "## Comparison") {
		t.Errorf("report.md does not open with the summary:\n%.400s", md)
	}
}
