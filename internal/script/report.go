package script

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Report is the outcome of a run: each script's result, and the script
// files that could not be read.
type Report struct {
	Results []*Result
	// Broken are the problems of script files that could not be loaded, one
	// *Error each.
	Broken   []*Error
	Duration time.Duration
}

// NewReport puts results together with the error Load returned.
func NewReport(results []*Result, loadErr error, d time.Duration) *Report {
	return &Report{Results: results, Broken: flatten(loadErr), Duration: d}
}

// flatten lists the *Error values inside a joined error; anything else
// becomes an *Error without a file.
func flatten(err error) []*Error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*Error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	var e *Error
	if errors.As(err, &e) {
		return []*Error{e}
	}
	return []*Error{{Msg: err.Error()}}
}

// brokenFiles groups the load problems by file, in the order found.
func (r *Report) brokenFiles() ([]string, map[string][]*Error) {
	var files []string
	by := map[string][]*Error{}
	for _, e := range r.Broken {
		if _, ok := by[e.File]; !ok {
			files = append(files, e.File)
		}
		by[e.File] = append(by[e.File], e)
	}
	return files, by
}

// Passed counts the scripts that passed.
func (r *Report) Passed() int {
	n := 0
	for _, res := range r.Results {
		if !res.Failed() && !res.Skipped {
			n++
		}
	}
	return n
}

// Skipped counts the scripts not played because they say skip.
func (r *Report) Skipped() int {
	n := 0
	for _, res := range r.Results {
		if res.Skipped {
			n++
		}
	}
	return n
}

// Failed counts the scripts that failed and the files that could not be
// loaded.
func (r *Report) Failed() int {
	files, _ := r.brokenFiles()
	return len(r.Results) - r.Passed() - r.Skipped() + len(files)
}

// Summary is the closing line: "N passed, N failed", and ", N skipped"
// when scripts were skipped.
func (r *Report) Summary() string {
	s := fmt.Sprintf("%d passed, %d failed", r.Passed(), r.Failed())
	if n := r.Skipped(); n > 0 {
		s += fmt.Sprintf(", %d skipped", n)
	}
	return s
}

// WriteText writes what failed and why, then the summary line; verbose
// adds every passing script and every step.
func (r *Report) WriteText(w io.Writer, verbose bool) {
	files, by := r.brokenFiles()
	for _, f := range files {
		fmt.Fprintf(w, "--- BROKEN: %s (not run)\n", f)
		for _, e := range by[f] {
			fmt.Fprintf(w, "    %s\n", e.Error())
		}
	}
	for _, res := range r.Results {
		switch {
		case res.Skipped:
			fmt.Fprintf(w, "--- SKIP: %s (%s:%d): %s\n", res.Script.Name, res.Script.File, res.Script.Line, res.Script.Skip)
		case res.Failed():
			fmt.Fprintf(w, "--- FAIL: %s\n", res.title())
			writeIndented(w, res.Text())
		case verbose:
			fmt.Fprintf(w, "--- ok: %s\n", res.title())
			for _, st := range res.Steps {
				fmt.Fprintf(w, "    step %d: %s → %s\n", st.N, st.Sent, st.got.describe())
			}
		}
	}
	n := len(r.Results) + len(files)
	fmt.Fprintf(w, "%d %s in %s\n", n, map[bool]string{true: "script", false: "scripts"}[n == 1], r.Duration.Round(time.Millisecond))
	fmt.Fprintln(w, r.Summary())
}

func writeIndented(w io.Writer, text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(w, "    %s\n", line)
	}
}

func (r *Result) title() string {
	return fmt.Sprintf("%s (%s:%d, %s) %s", r.Script.Name, r.Script.File, r.Script.Line, r.Script.Tool, r.Duration.Round(time.Millisecond))
}

// Text explains a failed script: per failed step, what was sent, each field
// with the value expected and the value that came, and what the response
// held. It is empty for a script that passed.
func (r *Result) Text() string {
	if !r.Failed() {
		return ""
	}
	var b strings.Builder
	for _, st := range r.Steps {
		if !st.Failed() {
			continue
		}
		label := fmt.Sprintf("step %d", st.N)
		if st.Name != "" {
			label += fmt.Sprintf(" %q", st.Name)
		}
		fmt.Fprintf(&b, "%s (%s:%d): %s\n", label, r.Script.File, st.Pos.Line, st.Sent)
		if st.user != "" {
			fmt.Fprintf(&b, "    user said: %s\n", quote(st.user))
		}
		if st.Err != nil {
			fmt.Fprintf(&b, "    %v\n", st.Err)
		}
		for _, m := range st.Mismatches {
			fmt.Fprintf(&b, "    %s\n", m.String())
		}
		if st.got != nil && st.got.err == nil {
			b.WriteString("  the response:\n")
			for _, line := range st.got.details() {
				fmt.Fprintf(&b, "    %s\n", line)
			}
		}
	}
	if n, total := len(r.Steps), len(r.Script.steps); n < total {
		next := n + 1
		what := fmt.Sprintf("step %d", next)
		if next < total {
			what = fmt.Sprintf("steps %d-%d", next, total)
		}
		fmt.Fprintf(&b, "%s not run (a script stops at its first failed step; --keep-going runs the rest)\n", what)
	}
	fmt.Fprintf(&b, "conversation_id: %s\n", r.ConversationID)
	return b.String()
}

// String is one line: the field, where the script says it, both values.
func (m Mismatch) String() string {
	return fmt.Sprintf("%s (line %d): expected %s, got %s", m.Field, m.Pos.Line, m.Want, m.Got)
}

// firstProblem is the one-line reason of a failed script, for JUnit.
func (r *Result) firstProblem() (msg string, isError bool) {
	for _, st := range r.Steps {
		if st.Err != nil {
			return fmt.Sprintf("step %d: %v", st.N, st.Err), true
		}
		if len(st.Mismatches) > 0 {
			return fmt.Sprintf("step %d: %s", st.N, st.Mismatches[0].String()), false
		}
	}
	return "the script did not run to its end", true
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes the report as JUnit XML: one testsuite per file, one
// testcase per script. A mismatch is a failure; a failed call or a file
// that could not be loaded is an error.
func (r *Report) WriteJUnit(w io.Writer) error {
	out := junitSuites{Name: "slotd scripts", Time: seconds(r.Duration)}
	index := map[string]int{}
	spent := map[string]time.Duration{}
	suite := func(file string) *junitSuite {
		i, ok := index[file]
		if !ok {
			i = len(out.Suites)
			index[file] = i
			out.Suites = append(out.Suites, junitSuite{Name: file})
		}
		return &out.Suites[i]
	}
	files, by := r.brokenFiles()
	for _, f := range files {
		s := suite(f)
		var lines []string
		for _, e := range by[f] {
			lines = append(lines, e.Error())
		}
		c := junitCase{Name: f, Classname: f, File: f, Time: seconds(0),
			Error: &junitFailure{Message: lines[0], Type: "malformed script", Text: strings.Join(lines, "\n")}}
		if p := by[f][0].Pos; p.Line > 0 {
			c.Line = p.Line
		}
		s.Cases = append(s.Cases, c)
		s.Tests++
		s.Errors++
	}
	for _, res := range r.Results {
		s := suite(res.Script.File)
		spent[res.Script.File] += res.Duration
		c := junitCase{Name: res.Script.Name, Classname: res.Script.File, File: res.Script.File, Line: res.Script.Line,
			Time: seconds(res.Duration), SystemOut: "conversation_id: " + res.ConversationID}
		s.Tests++
		if res.Skipped {
			c.Skipped = &junitSkipped{Message: res.Script.Skip}
			c.SystemOut = ""
			s.Skipped++
		}
		if res.Failed() {
			msg, isErr := res.firstProblem()
			f := &junitFailure{Message: msg, Type: "mismatch", Text: res.Text()}
			if isErr {
				f.Type = "call failed"
				c.Error = f
				s.Errors++
			} else {
				c.Failure = f
				s.Failures++
			}
		}
		s.Cases = append(s.Cases, c)
	}
	for i := range out.Suites {
		s := &out.Suites[i]
		s.Time = seconds(spent[s.Name])
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
