// Package script owns conversation scripts: YAML files that drive one slotd
// conversation turn by turn and say what each response must hold. A Runner
// plays them over a gRPC connection and reports, per step and per field,
// what was expected and what came; `slotd script run` and Go tests (package
// scripttest) both use it. docs/scripts.md describes the format.
package script

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// Script is one conversation: a tool, its locale, time zone and start clock,
// and the steps to play.
type Script struct {
	// Name labels the script in reports; the file name when not given.
	Name string
	// File is the path the script was read from; Line is where its YAML
	// document starts.
	File string
	Line int
	// Tool is the contract name every turn is sent with.
	Tool     string
	Locale   string
	TimeZone string
	// Clock is the script's start clock; zero means the runner's clock when
	// the script starts.
	Clock time.Time
	// Skip, when set, says why the script is not played (a known bug, a
	// feature still to come); it is reported as skipped.
	Skip string

	steps []*step
}

type stepKind int

const (
	kindTurn stepKind = iota
	kindReset
	kindComplete
	kindParallel // the calls of one model message, sent at once
)

func (k stepKind) String() string {
	return [...]string{"turn", "reset", "complete", "parallel"}[k]
}

// step is one thing the script does and what it expects back.
type step struct {
	n    int // 1-based
	pos  Pos
	name string
	user string
	kind stepKind

	// tool is the contract a turn is sent with, when not the script's; a
	// reset or a completion names it only when set.
	tool    string
	hasArgs bool
	args    map[string]any // nil with hasArgs: no arguments sent
	confirm *bool
	turnID  string
	advance time.Duration
	// calls are a parallel step's turns, each a step of kind turn with the
	// parallel step's number; call is a call's 1-based place among them.
	calls []*step
	call  int

	complete *completion
	expect   *expect
	layout   stepLayout
}

type completion struct {
	hasResult      bool
	result         any
	failure        *slotdv1.BackendFailure
	idempotencyKey string
}

// Pos is a place in a script file; Line and Column count from 1.
type Pos struct{ Line, Column int }

// Error is one thing wrong in a script file: where, which field, and why.
type Error struct {
	File string
	Pos  Pos
	// Step is the 1-based step the field belongs to; 0 for the script's own
	// fields.
	Step int
	// Field is the path of the field inside the script or step, e.g.
	// "expect.action".
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Pos.Line, e.Pos.Column)
	}
	b.WriteString(": ")
	if e.Step > 0 {
		fmt.Fprintf(&b, "step %d: ", e.Step)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads the scripts at paths: files, or folders searched recursively
// for *.yaml and *.yml files (in name order). A file may hold several
// scripts as YAML documents separated by "---". The error joins one *Error
// per problem found, naming file, line and field; the scripts of files
// without problems are returned all the same, so one broken file does not
// stop the others from running.
func Load(paths ...string) ([]*Script, error) {
	files, err := expand(paths)
	var out []*Script
	errs := []error{err}
	for _, f := range files {
		data, rerr := os.ReadFile(f)
		if rerr != nil {
			errs = append(errs, &Error{File: f, Msg: rerr.Error()})
			continue
		}
		scripts, perr := Parse(f, data)
		if perr != nil {
			errs = append(errs, perr)
			continue
		}
		out = append(out, scripts...)
	}
	return out, errors.Join(errs...)
}

// expand turns paths into script files.
func expand(paths []string) ([]string, error) {
	var files []string
	var errs []error
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			errs = append(errs, &Error{File: p, Msg: "no such file or folder"})
			continue
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if path != p && strings.HasPrefix(name, ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if ext := filepath.Ext(name); (ext == ".yaml" || ext == ".yml") && !strings.HasPrefix(name, ".") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, &Error{File: p, Msg: err.Error()})
		}
		if len(found) == 0 && err == nil {
			errs = append(errs, &Error{File: p, Msg: "no *.yaml or *.yml scripts in this folder"})
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, errors.Join(errs...)
}
