package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/provider"
)

// contractCommand works with contract files, without a server:
//
//	slotd contract export --provider openai|anthropic|plain NAME
//	slotd contract lint DIR
//	slotd contract list
func contractCommand(_ context.Context, args []string) error {
	return contractTo(os.Stdout, args)
}

const contractUsage = "usage: slotd contract export --provider openai|anthropic|plain [--contracts DIR] [--parameters] NAME | lint [--json] [--strict] DIR | list [--contracts DIR]"

func contractTo(w io.Writer, args []string) error {
	if len(args) == 0 {
		return errors.New(contractUsage)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("contract "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("contracts", env("SLOTD_CONTRACTS", "./contracts"), "folder of contract files (SLOTD_CONTRACTS)")
	switch sub {
	case "export":
		prov := fs.String("provider", provider.Plain, "openai, anthropic or plain")
		paramsOnly := fs.Bool("parameters", false, "print only the input schema, not the whole tool definition")
		if err := parseInterspersed(fs, args); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("usage: slotd contract export --provider openai|anthropic|plain NAME")
		}
		cat, err := contract.LoadDir(*dir)
		if err != nil {
			return err
		}
		c := cat.Get(fs.Arg(0))
		if c == nil {
			return fmt.Errorf("no contract named %q in %s (have: %v)", fs.Arg(0), *dir, cat.Names())
		}
		e, err := provider.Export(c, *prov)
		if err != nil {
			return err
		}
		out, err := e.Definition()
		if *paramsOnly {
			out, err = e.ParametersJSON()
		}
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	case "lint":
		asJSON := fs.Bool("json", false, "print the findings as JSON")
		strict := fs.Bool("strict", false, "fail on warnings too")
		if err := parseInterspersed(fs, args); err != nil {
			return err
		}
		target := *dir
		if fs.NArg() == 1 {
			target = fs.Arg(0)
		} else if fs.NArg() > 1 {
			return errors.New("usage: slotd contract lint [--json] [--strict] DIR")
		}
		findings, err := provider.LintDir(target)
		if err != nil {
			return err
		}
		errs, warns := 0, 0
		for _, f := range findings {
			if f.Severity == provider.SeverityError {
				errs++
			} else {
				warns++
			}
		}
		if *asJSON {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if findings == nil {
				findings = []provider.Finding{}
			}
			if err := enc.Encode(findings); err != nil {
				return err
			}
		} else {
			for _, f := range findings {
				fmt.Fprintln(w, f)
			}
			fmt.Fprintf(w, "%s: %d errors, %d warnings\n", target, errs, warns)
			if errs == 0 {
				if err := printSizes(w, target); err != nil {
					return err
				}
			}
		}
		switch {
		case errs > 0:
			return fmt.Errorf("contract lint: %d errors in %s", errs, target)
		case *strict && warns > 0:
			return fmt.Errorf("contract lint: %d warnings in %s (--strict)", warns, target)
		}
		return nil
	case "list":
		if err := parseInterspersed(fs, args); err != nil {
			return err
		}
		cat, err := contract.LoadDir(*dir)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tVERSION\tAPPROVAL\tDESCRIPTION")
		for _, c := range cat.All() {
			approval := "no"
			if c.Confirm {
				approval = "yes"
			}
			desc := []rune(c.Description)
			if len(desc) > 60 {
				desc = append(desc[:60], '…')
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, c.Version, approval, string(desc))
		}
		return tw.Flush()
	}
	return fmt.Errorf("unknown contract command %q (export, lint, list)", sub)
}

// printSizes shows what each tool's export costs on every request, per
// provider and for the whole catalog.
func printSizes(w io.Writer, dir string) error {
	cat, err := contract.LoadDir(dir)
	if err != nil {
		return err
	}
	sizes, err := provider.Sizes(cat.All())
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\nexport sizes, paid on every request (tokens are an estimate: bytes / 4)")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TOOL\tPROVIDER\tBYTES\t~TOKENS\t")
	for _, s := range sizes {
		tool := s.Tool
		if tool == "*" {
			tool = fmt.Sprintf("all %d tools", len(cat.All()))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t\n", tool, s.Provider, s.Bytes, s.Tokens)
	}
	return tw.Flush()
}

// parseInterspersed parses flags that may come after the positional
// arguments too: "export bank.open_dispute --provider openai".
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}
