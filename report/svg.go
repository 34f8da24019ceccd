package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mkrelease/mkrelease/evidence/stats"
)

// The plots are computed here as shapes with their coordinates; page.html
// writes them as inline SVG. Every coordinate is a formatted string, so
// the same figures give the same bytes.

// Plot geometry, in SVG user units.
const (
	plotWidth  = 720
	labelWidth = 200 // left margin of the dot plot, for row labels
	plotRight  = 24
	rowHeight  = 24
	axisHeight = 36
	traceH     = 220
	traceTop   = 28
	traceLeft  = 56
	traceBot   = 28
	cvH        = 180
	cvLeft     = 56
	cvBot      = 40
	cvLabel    = 150 // right margin of the CV plot, for the bound's label
)

// num formats a coordinate.
func num(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// dotPlot is the dot plot of one crossover lane: each workload's r, and
// each board's geometric mean with its 95 % interval, on a log axis.
type dotPlot struct {
	Lane          string
	Width, Height string
	Rows          []dotRow
	Ticks         []tick
	// One is the x of r = 1; Bound the x of the least r of a workload.
	One, Bound        string
	BoundLabel        string
	PlotTop, PlotBot  string
	AxisY, AxisLabelY string
	X0, X1            string
}

// dotRow is one row: a workload's r (Interval false) or a board.
type dotRow struct {
	Class, Label, Key string
	Y, LabelX         string
	X                 string // the dot; "" when there is none (unusable)
	Value             string
	Interval          bool
	Lo, Hi            string // the interval's ends; Hi at the edge when unbounded
	Open              bool   // the interval is unbounded
	Note              string
}

type tick struct{ X, Label string }

// logScale maps [lo, hi] (lo > 0) onto [x0, x1] logarithmically.
type logScale struct{ lo, hi, x0, x1 float64 }

func (s logScale) at(v float64) float64 {
	v = min(max(v, s.lo), s.hi)
	return s.x0 + (math.Log(v)-math.Log(s.lo))/(math.Log(s.hi)-math.Log(s.lo))*(s.x1-s.x0)
}

func newDotPlot(lane string, x *Crossover) dotPlot {
	lo, hi := 1.0, 1.0
	see := func(v float64) {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	for _, w := range x.Workloads {
		if w.Usable {
			see(w.R)
		}
	}
	boards := append([]stats.Board{}, x.Phases...)
	for _, b := range append(boards, x.Overall) {
		see(b.Geomean)
		if b.Bounded {
			see(b.Lo)
			see(b.Hi)
		}
	}
	see(x.MinWorkload)
	lo, hi = lo/1.08, hi*1.08
	s := logScale{lo: lo, hi: hi, x0: labelWidth, x1: plotWidth - plotRight}
	p := dotPlot{Lane: lane, Width: num(plotWidth), One: num(s.at(1)), X0: num(s.x0), X1: num(s.x1)}
	if x.MinWorkload > 0 {
		p.Bound = num(s.at(x.MinWorkload))
		p.BoundLabel = "workload bound " + strconv.FormatFloat(x.MinWorkload, 'f', 2, 64)
	}
	y := float64(rowHeight)
	row := func(r dotRow) {
		r.Y, r.LabelX = num(y), num(labelWidth-8)
		p.Rows = append(p.Rows, r)
		y += rowHeight
	}
	for _, w := range x.Workloads {
		r := dotRow{Class: "r-dot", Label: w.Name, Key: w.Name}
		if w.Usable {
			r.X, r.Value = num(s.at(w.R)), fmt.Sprintf("r = %.3f", w.R)
		} else {
			r.Note = "unusable"
		}
		row(r)
	}
	board := func(b stats.Board, label, key string) {
		r := dotRow{Class: "board-dot", Label: label, Key: key}
		if b.N == 0 {
			r.Note = "no usable workload"
			row(r)
			return
		}
		r.X, r.Value, r.Interval = num(s.at(b.Geomean)), fmt.Sprintf("geomean %.3f", b.Geomean), true
		if b.Bounded {
			r.Lo, r.Hi = num(s.at(b.Lo)), num(s.at(b.Hi))
			r.Value += fmt.Sprintf(", 95%% interval [%.3f, %.3f]", b.Lo, b.Hi)
		} else {
			r.Lo, r.Hi, r.Open = num(s.x0), num(s.x1), true
			r.Value += ", interval unbounded (n < 2)"
		}
		row(r)
	}
	for _, b := range x.Phases {
		board(b, "phase "+b.Phase, "phase:"+b.Phase)
	}
	board(x.Overall, "overall", "overall")
	p.PlotTop, p.PlotBot = num(rowHeight/2), num(y-rowHeight/2)
	p.AxisY, p.AxisLabelY = num(y), num(y+16)
	p.Height = num(y + axisHeight)
	for i := range 5 {
		v := math.Exp(math.Log(lo) + float64(i)/4*(math.Log(hi)-math.Log(lo)))
		p.Ticks = append(p.Ticks, tick{X: num(s.at(v)), Label: strconv.FormatFloat(v, 'f', 2, 64)})
	}
	return p
}

// tracePlot is the step times of one workload's workers in run order
// (ABBA: slot 1 candidate, 2 and 3 reference, 4 candidate), every attempt
// included, one segment per attempt.
type tracePlot struct {
	Workload      string
	Width, Height string
	Segments      []traceSegment
	YTicks        []tick
	X0, X1, Y0    string
	Top           string
}

type traceSegment struct {
	Worker, Role, Slot, Attempt string
	Class                       string
	Points                      string // the polyline
	Steps                       []stepDot
	Label, LabelX, LabelY       string
	SepX                        string // the separator before this segment ("" for the first)
	Title                       string
}

type stepDot struct {
	X, Y, Class, Title string
}

func newTracePlot(w Workload) tracePlot {
	// An attempt with few steps (one that failed to start) still gets
	// room for its label.
	width := func(k Worker) int { return max(len(k.StepsS), 4) }
	total, maxS := 0, 0.0
	for _, k := range w.Workers {
		total += width(k)
		for _, v := range k.StepsS {
			maxS = max(maxS, v)
		}
	}
	if maxS <= 0 {
		maxS = 1
	}
	maxS *= 1.08
	x0, x1 := float64(traceLeft), float64(plotWidth-plotRight)
	y0, y1 := float64(traceH-traceBot), float64(traceTop)
	step := (x1 - x0) / float64(max(total, 1))
	yAt := func(v float64) float64 { return y0 - v/maxS*(y0-y1) }
	p := tracePlot{Workload: w.Name, Width: num(plotWidth), Height: num(traceH), X0: num(x0), X1: num(x1), Y0: num(y0), Top: num(y1)}
	i := 0
	for _, k := range w.Workers {
		seg := traceSegment{Worker: fmt.Sprintf("%d.%d", k.Slot, k.Attempt), Role: k.Role, Slot: strconv.Itoa(k.Slot), Attempt: strconv.Itoa(k.Attempt),
			Class: "trace " + k.Role, Label: fmt.Sprintf("%d %s", k.Slot, roleLetter(k.Role)), LabelY: num(y1 - 8)}
		if k.Attempt > 1 {
			seg.Label += fmt.Sprintf(" (attempt %d)", k.Attempt)
		}
		if !k.Chosen || k.Outcome != "ok" {
			seg.Class += " failed"
			seg.Label += " ✗"
		}
		seg.Title = fmt.Sprintf("slot %d %s, attempt %d: %s", k.Slot, k.Role, k.Attempt, k.Outcome)
		start := x0 + float64(i)*step
		if i > 0 {
			seg.SepX = num(start)
		}
		seg.LabelX = num(start + 4)
		dropped := map[int]bool{}
		for _, d := range k.Dropped {
			dropped[d] = true
		}
		pts := ""
		for j, v := range k.StepsS {
			x, y := start+(float64(j)+0.5)*step, yAt(v)
			if j > 0 {
				pts += " "
			}
			pts += num(x) + "," + num(y)
			d := stepDot{X: num(x), Y: num(y), Class: "step", Title: fmt.Sprintf("step %d: %.6g s", j+1, v)}
			if dropped[j] {
				d.Class, d.Title = "step dropped", d.Title+" (dropped)"
			}
			seg.Steps = append(seg.Steps, d)
		}
		seg.Points = pts
		i += width(k)
		p.Segments = append(p.Segments, seg)
	}
	for j := range 5 {
		v := maxS / 1.08 * float64(j) / 4
		p.YTicks = append(p.YTicks, tick{X: num(yAt(v)), Label: strconv.FormatFloat(v*1000, 'f', 2, 64) + " ms"})
	}
	return p
}

func roleLetter(role string) string {
	if role == "candidate" {
		return "C"
	}
	return "R"
}

// cvPlot is each chosen worker's robust CV (a bar) and CV (a mark)
// against the policy's bound on the robust CV.
type cvPlot struct {
	Workload      string
	Width, Height string
	Bars          []cvBar
	BoundY        string
	BoundLabel    string
	X0, X1, Y0    string
}

type cvBar struct {
	Worker, Role, Class   string
	X, Y, W, H            string
	MarkX1, MarkX2, MarkY string
	Label, LabelX, LabelY string
	Title                 string
}

func newCVPlot(w Workload, bound float64) cvPlot {
	var chosen []Worker
	top := bound * 1.5
	for _, k := range w.Workers {
		if k.Chosen && k.Outcome == "ok" {
			chosen = append(chosen, k)
			top = max(top, k.CV*1.1, k.RobustCV*1.1)
		}
	}
	if top <= 0 {
		top = 0.1
	}
	// The bars leave the right margin to the bound's label.
	x0, x1 := float64(cvLeft), float64(plotWidth-plotRight-cvLabel)
	y0, y1 := float64(cvH-cvBot), 12.0
	yAt := func(v float64) float64 { return y0 - v/top*(y0-y1) }
	p := cvPlot{Workload: w.Name, Width: num(plotWidth), Height: num(cvH), X0: num(x0), X1: num(plotWidth - plotRight), Y0: num(y0),
		BoundY: num(yAt(bound)), BoundLabel: fmt.Sprintf("bound %.1f%%", 100*bound)}
	slot := (x1 - x0) / float64(max(len(chosen), 1))
	for i, k := range chosen {
		bx := x0 + float64(i)*slot + slot*0.25
		bw := slot * 0.5
		b := cvBar{Worker: fmt.Sprintf("%d.%d", k.Slot, k.Attempt), Role: k.Role, Class: "cv-bar " + k.Role,
			X: num(bx), W: num(bw), Y: num(yAt(k.RobustCV)), H: num(y0 - yAt(k.RobustCV)),
			MarkX1: num(bx - 6), MarkX2: num(bx + bw + 6), MarkY: num(yAt(k.CV)),
			Label: fmt.Sprintf("%d %s", k.Slot, roleLetter(k.Role)), LabelX: num(bx + bw/2), LabelY: num(y0 + 16),
			Title: fmt.Sprintf("slot %d %s: robust CV %.2f%%, CV %.2f%%", k.Slot, k.Role, 100*k.RobustCV, 100*k.CV)}
		if k.OverBound {
			b.Class += " over"
		}
		p.Bars = append(p.Bars, b)
	}
	return p
}
