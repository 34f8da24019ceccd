package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
)

//go:embed page.html
var pageSource string

// parsePage parses the page template.
func parsePage() (*template.Template, error) {
	return template.New("page").Funcs(template.FuncMap{
		"pct":   func(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) },
		"f3":    func(x float64) string { return fmt.Sprintf("%.3f", x) },
		"sec":   func(x float64) string { return fmt.Sprintf("%.6g", x) },
		"prose": prose,
	}).Parse(pageSource)
}

// prose renders text, escaped, with its `quoted` spans (commands, in
// remedies) as code.
func prose(text string) template.HTML {
	var b strings.Builder
	for i, part := range strings.Split(text, "`") {
		if i%2 == 1 {
			b.WriteString("<code>" + template.HTMLEscapeString(part) + "</code>")
		} else {
			b.WriteString(template.HTMLEscapeString(part))
		}
	}
	return template.HTML(b.String())
}

// view is what the page template reads: the report and its plots.
type view struct {
	*Report
	Evidence []evidenceView
}

type evidenceView struct {
	Evidence
	Lanes []laneView
}

type laneView struct {
	Lane
	Dot       *dotPlot
	Workloads []workloadView
}

type workloadView struct {
	Workload
	Trace tracePlot
	CV    cvPlot
}

// WriteHTML writes r as one self-contained HTML page: inline CSS, inline
// SVG plots, no script and no reference to anything outside the page.
// Every string of r is escaped (html/template). The plots carry stable
// classes and data attributes: svg.dot-plot[data-lane] with one
// circle.r-dot[data-workload] per usable workload and circle.board-dot
// and line.interval per board; svg.trace-plot[data-workload] with one
// g.trace[data-worker=SLOT.ATTEMPT][data-role][data-slot] per worker
// attempt in run order; svg.cv-plot[data-workload] with one
// rect.cv-bar[data-worker] per chosen worker and line.cv-bound.
func WriteHTML(w io.Writer, r *Report) error {
	v := view{Report: r}
	for _, e := range r.Evidence {
		ev := evidenceView{Evidence: e}
		for _, l := range e.Lanes {
			lv := laneView{Lane: l}
			if x := l.Crossover; x != nil {
				d := newDotPlot(l.Name, x)
				lv.Dot = &d
				for _, wl := range x.Workloads {
					lv.Workloads = append(lv.Workloads, workloadView{Workload: wl, Trace: newTracePlot(wl), CV: newCVPlot(wl, x.MaxRobustCV)})
				}
			}
			ev.Lanes = append(ev.Lanes, lv)
		}
		v.Evidence = append(v.Evidence, ev)
	}
	page, err := parsePage()
	if err != nil {
		return fmt.Errorf("report: the page template: %w", err)
	}
	return page.Execute(w, v)
}
