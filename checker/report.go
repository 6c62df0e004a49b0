// Results of histories, the Porcupine check and what a failure leaves
// behind: the HTML visualisation and the history as text, under a temp dir
// whose path is printed.
package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// result is the verdict on one history.
type result struct {
	name     string
	ops      int
	failures []string
	excerpt  []string // lines around the first violation
	files    []string // artefacts written
	elapsed  time.Duration
	checking time.Duration // of elapsed, the check itself
}

func (r *result) fail(format string, args ...interface{}) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *result) ok() bool { return len(r.failures) == 0 }

// porcupineTimeout bounds one history's check; past it the verdict is
// Unknown, reported as inconclusive.
var porcupineTimeout = 30 * time.Second

// inconclusiveFails makes an Unknown verdict count as a failure.
var inconclusiveFails = true

func checkLinear(res *result, history []porcupine.Operation, model porcupine.Model, artefacts string) {
	began := time.Now()
	verdict, info := porcupine.CheckOperationsVerbose(model, history, porcupineTimeout)
	res.checking = time.Since(began)
	switch verdict {
	case porcupine.Ok:
		if res.ok() {
			return
		}
	case porcupine.Unknown:
		msg := fmt.Sprintf("INCONCLUSIVE: Porcupine gave no verdict within %v on %d operations", porcupineTimeout, len(history))
		if inconclusiveFails {
			res.fail("%s", msg)
		} else {
			res.excerpt = append(res.excerpt, msg)
			return
		}
	case porcupine.Illegal:
		res.fail("not linearizable")
		parts := [][]porcupine.Operation{history}
		if model.Partition != nil {
			parts = model.Partition(history)
		}
		res.excerpt = append(res.excerpt, excerpt(model, info, parts)...)
	}
	dir, err := artefactDir(artefacts, res.name)
	if err != nil {
		res.fail("cannot write artefacts: %v", err)
		return
	}
	html := filepath.Join(dir, "linearizability.html")
	if err := porcupine.VisualizePath(model, info, html); err == nil {
		res.files = append(res.files, html)
	}
	verdictPath := filepath.Join(dir, "verdict.txt")
	lines := append(append([]string{res.name}, res.failures...), res.excerpt...)
	if err := os.WriteFile(verdictPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err == nil {
		res.files = append(res.files, verdictPath)
	}
	text := filepath.Join(dir, "history.txt")
	if err := os.WriteFile(text, []byte(historyText(history)), 0o644); err == nil {
		res.files = append(res.files, text)
	}
}

// artefactDir makes a new directory for one failed history's files: under
// a new temp dir, or under -out, named after the history and unique (a
// later failure of the same history name must not overwrite one).
func artefactDir(artefacts, name string) (string, error) {
	if artefacts == "" {
		return os.MkdirTemp("", "firn-checker-fail-")
	}
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(artefacts, strings.ReplaceAll(name, "/", "-")+"-")
}

// historyText lists operations in call order, one a line.
func historyText(history []porcupine.Operation) string {
	ops := append([]porcupine.Operation(nil), history...)
	sort.Slice(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	var b strings.Builder
	for _, op := range ops {
		b.WriteString(opLine(op))
		b.WriteByte('\n')
	}
	return b.String()
}

func opLine(op porcupine.Operation) string {
	ret := "inf"
	if op.Return != math.MaxInt64 {
		ret = fmt.Sprintf("%.3f", float64(op.Return)/1e6)
	}
	return fmt.Sprintf("[%9.3f, %9s ms] c%-3d %s", float64(op.Call)/1e6, ret, op.ClientId, describeOp(op.Input, op.Output))
}

// excerpt shows where the check got stuck: the end of the longest partial
// linearization of the first failing partition, the state it reached, and
// the operations that could not follow.
func excerpt(model porcupine.Model, info porcupine.LinearizationInfo, parts [][]porcupine.Operation) []string {
	partitions := info.PartialLinearizationsOperations()
	var lines []string
	for p, partition := range partitions {
		// A partition passed when one linearization holds all of it; the
		// first that does not is the failing one.
		var longest []porcupine.Operation
		for _, lin := range partition {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
		if p >= len(parts) {
			break
		}
		all := parts[p]
		if len(longest) == len(all) {
			continue
		}
		state := model.Init()
		for _, op := range longest {
			_, state = model.Step(state, op.Input, op.Output)
		}
		from := maxInt(0, len(longest)-8)
		lines = append(lines, fmt.Sprintf("longest linearization: %d of %d operations; its last ones:", len(longest), len(all)))
		for _, op := range longest[from:] {
			lines = append(lines, "  "+opLine(op))
		}
		lines = append(lines, "state then: "+model.DescribeState(state))
		lines = append(lines, "none of these can come next:")
		in := map[string]bool{}
		for _, op := range longest {
			in[opLine(op)] = true
		}
		var pending []porcupine.Operation
		for _, op := range all {
			if !in[opLine(op)] {
				pending = append(pending, op)
			}
		}
		sort.Slice(pending, func(i, j int) bool { return pending[i].Call < pending[j].Call })
		earliestReturn := int64(math.MaxInt64)
		for _, op := range pending {
			if op.Return < earliestReturn {
				earliestReturn = op.Return
			}
		}
		for _, op := range pending {
			if op.Call <= earliestReturn {
				lines = append(lines, "  "+opLine(op))
			}
		}
		break
	}
	return lines
}
