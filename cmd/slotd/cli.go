package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// command is one slotd command or subcommand: what its usage says, its
// flags and its work. A command either holds subcommands or does work.
type command struct {
	name string
	// args is what follows the flags on the usage line ("NAME", "PATH...").
	args string
	// summary is its line in the parent's list; about what it does, after
	// the usage line.
	summary, about string
	// setup declares the command's flags on fs and returns what the command
	// does with the arguments left after them.
	setup func(fs *flags) runFunc
	subs  []*command
}

// runFunc is a command's work, on the arguments after its flags.
type runFunc func(ctx context.Context, c *cli, args []string) error

// cli is one invocation of slotd: its streams and its environment.
type cli struct {
	stdout, stderr io.Writer
	lookupEnv      func(string) (string, bool)
}

// usageError is a command given wrongly: one line on stderr, exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// errLogged is a failure its command already reported (serve, in its log).
var errLogged = errors.New("failed; see the log")

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// execute runs the command args name under root and returns the process's
// exit code: usage and help on stdout with 0, a usage error as one line on
// stderr with 2, any other error as one line on stderr with 1.
func (c *cli) execute(ctx context.Context, root *command, args []string) int {
	path := "slotd"
	cmd := root
	for len(cmd.subs) > 0 {
		if len(args) == 0 || isHelp(args[0]) {
			c.usage(path, cmd)
			return exitOK
		}
		if args[0] == "help" && cmd == root {
			return c.help(root, args[1:])
		}
		if args[0] == "--version" && cmd == root {
			args[0] = "version"
		}
		sub := cmd.sub(args[0])
		if sub == nil {
			return c.fail(path, usagef("unknown command %q (%s --help lists them)", args[0], path))
		}
		path, cmd, args = path+" "+sub.name, sub, args[1:]
	}
	fs := newFlags(path)
	work := cmd.setup(fs)
	rest, err := fs.parse(args, c.lookupEnv)
	if errors.Is(err, flag.ErrHelp) {
		c.usage(path, cmd)
		return exitOK
	}
	if err == nil {
		err = work(ctx, c, rest)
	}
	return c.fail(path, err)
}

// fail reports err of the command at path and returns the exit code.
func (c *cli) fail(path string, err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errLogged):
		return exitError
	case errors.As(err, &ue):
		fmt.Fprintf(c.stderr, "%s: %s\n", path, oneLine(ue.msg))
		return exitUsage
	}
	fmt.Fprintf(c.stderr, "%s: %s\n", path, oneLine(describe(err)))
	return exitError
}

// help is "slotd help [COMMAND [SUBCOMMAND]]".
func (c *cli) help(root *command, names []string) int {
	path, cmd := "slotd", root
	for _, n := range names {
		sub := cmd.sub(n)
		if sub == nil {
			return c.fail("slotd help", usagef("unknown command %q (slotd --help lists them)", strings.TrimSpace(path + " " + n)[len("slotd "):]))
		}
		path, cmd = path+" "+n, sub
	}
	c.usage(path, cmd)
	return exitOK
}

func (cmd *command) sub(name string) *command {
	for _, s := range cmd.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// usage prints a command's usage on stdout: the usage line, what it does,
// and its subcommands or its flags with their environment twins.
func (c *cli) usage(path string, cmd *command) {
	w := c.stdout
	if len(cmd.subs) > 0 {
		fmt.Fprintf(w, "usage: %s COMMAND [flags]\n\n", path)
		if cmd.about != "" {
			fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(cmd.about))
		}
		fmt.Fprintln(w, "commands:")
		width := 0
		for _, s := range cmd.subs {
			width = max(width, len(s.name))
		}
		for _, s := range cmd.subs {
			fmt.Fprintf(w, "  %-*s  %s\n", width, s.name, s.summary)
		}
		fmt.Fprintf(w, "\nRun \"%s COMMAND --help\" for a command's flags.\n", path)
		return
	}
	line := path + " [flags]"
	if cmd.args != "" {
		line += " " + cmd.args
	}
	fmt.Fprintf(w, "usage: %s\n\n", line)
	if about := strings.TrimSpace(cmd.about); about != "" {
		fmt.Fprintf(w, "%s\n\n", about)
	} else if cmd.summary != "" {
		fmt.Fprintf(w, "%s.\n\n", capitalize(cmd.summary))
	}
	fs := newFlags(path)
	cmd.setup(fs)
	fs.print(w)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flags is a command's flag set, in which every flag has an environment
// twin: a variable read when the flag is not on the command line.
type flags struct {
	fs   *flag.FlagSet
	env  map[string]string // flag name → its variable
	kind map[string]string // flag name → what its value must be, in words
	// given are the flags the command line set.
	given map[string]bool
}

func newFlags(name string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{fs: fs, env: map[string]string{}, kind: map[string]string{}}
}

func (f *flags) twin(name, env, kind string) {
	f.env[name], f.kind[name] = env, kind
}

// String declares a string flag with its environment twin env.
func (f *flags) String(p *string, name, env, def, usage string) {
	f.fs.StringVar(p, name, def, usage)
	f.twin(name, env, "")
}

// Bool declares a boolean flag; its twin takes true or false.
func (f *flags) Bool(p *bool, name, env string, def bool, usage string) {
	f.fs.BoolVar(p, name, def, usage)
	f.twin(name, env, "true or false")
}

// Int declares a whole-number flag.
func (f *flags) Int(p *int, name, env string, def int, usage string) {
	f.fs.IntVar(p, name, def, usage)
	f.twin(name, env, "a whole number")
}

// Duration declares a duration flag.
func (f *flags) Duration(p *time.Duration, name, env string, def time.Duration, usage string) {
	f.fs.DurationVar(p, name, def, usage)
	f.twin(name, env, "a duration such as 30s, 15m or 24h")
}

// parse reads the command line, flags before, between and after the
// positional arguments (up to "--"), then the environment twin of every
// flag the command line did not set. It returns the positional arguments.
func (f *flags) parse(args []string, lookupEnv func(string) (string, bool)) ([]string, error) {
	var pos []string
	for {
		if err := f.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%s (%s --help lists the flags)", f.flagError(err), f.fs.Name())
		}
		rest := f.fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	f.given = given
	names := make([]string, 0, len(f.env))
	for n := range f.env {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		v, ok := lookupEnv(f.env[name])
		if given[name] || !ok || v == "" && f.kind[name] != "" {
			continue
		}
		if err := f.fs.Set(name, v); err != nil {
			return nil, usagef("%s is not %s", f.env[name], f.kind[name])
		}
	}
	return pos, nil
}

var invalidValue = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-([a-z0-9-]+): `)

// flagError words the flag package's errors with the flags' two dashes,
// and says what a value must be in place of the parser's "parse error".
func (f *flags) flagError(err error) string {
	msg := err.Error()
	for _, r := range []struct{ prefix, format string }{
		{"flag provided but not defined: -", "unknown flag --%s"},
		{"flag needs an argument: -", "--%s needs a value"},
	} {
		if name, ok := strings.CutPrefix(msg, r.prefix); ok {
			return fmt.Sprintf(r.format, name)
		}
	}
	// invalid value "5" for flag -stale-after: parse error, and
	// invalid boolean value "maybe" for -mcp: parse error
	if m := invalidValue.FindStringSubmatch(msg); m != nil && f.kind[m[2]] != "" {
		return fmt.Sprintf("invalid value %s for --%s: want %s", m[1], m[2], f.kind[m[2]])
	}
	return strings.Replace(msg, " for flag -", " for --", 1)
}

// onCommandLine reports whether the command line, not the environment,
// set a flag.
func (f *flags) onCommandLine(name string) bool { return f.given[name] }

// print lists the flags, each with its default and its environment twin.
func (f *flags) print(w io.Writer) {
	fmt.Fprintln(w, "flags (each one's environment variable is read when the flag is not given):")
	f.fs.VisitAll(func(fl *flag.Flag) {
		typ, usage := flag.UnquoteUsage(fl)
		head := "  --" + fl.Name
		if typ != "" {
			head += " " + typ
		}
		var notes []string
		if fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" && fl.DefValue != "0s" {
			notes = append(notes, "default "+fl.DefValue)
		}
		notes = append(notes, "env "+f.env[fl.Name])
		fmt.Fprintf(w, "%s\n        %s (%s)\n", head, usage, strings.Join(notes, "; "))
	})
}

// noArgs refuses positional arguments to a command that takes none.
func noArgs(args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}

// oneOf refuses a flag's value outside a list.
func oneOf(flagName, v string, allowed []string) error {
	if !slices.Contains(allowed, v) {
		return usagef("--%s %q: one of %s", flagName, v, strings.Join(allowed, ", "))
	}
	return nil
}
