package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/provider"
)

var contractCommand = &command{
	name:    "contract",
	summary: "export, lint and list contract files, without a server",
	about: `Works with the contract files of a folder (--contracts, SLOTD_CONTRACTS):
exports a tool's definition for a model provider, lints the files against the
providers' strict modes, lists them. docs/contracts.md describes the format.`,
	subs: []*command{contractExport, contractLint, contractList, contractVersions, contractReplay},
}

var contractExport = &command{
	name:    "export",
	args:    "NAME | --all",
	summary: "print a tool's definition as a provider's strict mode takes it",
	about: `Prints the tool definition of the contract NAME (or of every contract, with
--all, as one JSON array: the tools member of a request) in the form the
provider takes it:

  openai       OpenAI Responses API: {"type":"function","name",…,"parameters"}
  openai-chat  OpenAI Chat Completions: {"type":"function","function":{…}}
  anthropic    Anthropic Messages API: {"name",…,"input_schema"}
  plain        the JSON Schema as written, without x-slotd
  mcp          the tool as slotd's MCP endpoint lists it: {"name",…,"inputSchema"},
               nothing required and a string accepted for every slot slotd
               normalizes (not a strict mode: slotd checks the contract)

--parameters prints only the input schema of one tool.`,
	setup: func(fs *flags) runFunc {
		dir := addContractsFlag(fs)
		var prov string
		var paramsOnly, all bool
		fs.String(&prov, "provider", "SLOTD_CONTRACT_PROVIDER", provider.Plain, "openai, openai-chat, anthropic, plain or mcp")
		fs.Bool(&paramsOnly, "parameters", "SLOTD_CONTRACT_PARAMETERS", false, "print only the tool's input schema, not the whole definition")
		fs.Bool(&all, "all", "SLOTD_CONTRACT_ALL", false, "print every contract's definition, as one JSON array")
		return func(_ context.Context, c *cli, args []string) error {
			if err := oneOf("provider", prov, provider.Names()); err != nil {
				return err
			}
			switch {
			case all && len(args) > 0:
				return usagef("give NAME or --all, not both")
			case all && paramsOnly:
				return usagef("--parameters prints one tool's input schema: give NAME, not --all")
			case !all && len(args) != 1:
				return usagef("give one contract NAME, or --all")
			}
			cat, err := contract.LoadDir(*dir)
			if err != nil {
				return err
			}
			cs := cat.All()
			if !all {
				one := cat.Get(args[0])
				if one == nil {
					return fmt.Errorf("no contract named %q in %s (have: %v)", args[0], *dir, cat.Names())
				}
				cs = []*contract.Contract{one}
			}
			tools := make([]*provider.Tool, 0, len(cs))
			for _, ct := range cs {
				e, err := provider.Export(ct, prov)
				if err != nil {
					return err
				}
				tools = append(tools, e)
			}
			var out []byte
			switch {
			case all:
				out, err = provider.Definitions(tools)
			case paramsOnly:
				out, err = tools[0].ParametersJSON()
			default:
				out, err = tools[0].Definition()
			}
			if err != nil {
				return err
			}
			_, err = c.stdout.Write(out)
			return err
		}
	},
}

var contractLint = &command{
	name:    "lint",
	args:    "[DIR | FILE]",
	summary: "check contract files against the providers' strict modes and limits",
	about: `Checks every *.json directly in DIR (default: --contracts), or one FILE, and prints
file#pointer: severity: message, then what each export costs on every
request. Exits 1 on errors, and with --strict on warnings too.`,
	setup: func(fs *flags) runFunc {
		dir := addContractsFlag(fs)
		var asJSON, strict bool
		fs.Bool(&asJSON, "json", "SLOTD_CONTRACT_JSON", false, "print the findings as JSON")
		fs.Bool(&strict, "strict", "SLOTD_CONTRACT_STRICT", false, "fail on warnings too")
		return func(_ context.Context, c *cli, args []string) error {
			target := *dir
			switch len(args) {
			case 0:
			case 1:
				target = args[0]
			default:
				return usagef("give at most one DIR or FILE")
			}
			return lint(c.stdout, target, asJSON, strict)
		}
	},
}

func lint(w io.Writer, target string, asJSON, strict bool) error {
	findings, err := provider.LintPath(target)
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
	if asJSON {
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
		return fmt.Errorf("%d errors in %s", errs, target)
	case strict && warns > 0:
		return fmt.Errorf("%d warnings in %s (--strict)", warns, target)
	}
	return nil
}

var contractList = &command{
	name:    "list",
	summary: "list the contracts: name, version, whether they need approval",
	setup: func(fs *flags) runFunc {
		dir := addContractsFlag(fs)
		return func(_ context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			cat, err := contract.LoadDir(*dir)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tAPPROVAL\tDESCRIPTION")
			for _, ct := range cat.All() {
				approval := "no"
				if ct.Confirm {
					approval = "yes"
				}
				desc := []rune(ct.Description)
				if len(desc) > 60 {
					desc = append(desc[:60], '…')
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ct.Name, ct.Version, approval, string(desc))
			}
			return tw.Flush()
		}
	},
}

func addContractsFlag(fs *flags) *string {
	dir := new(string)
	fs.String(dir, "contracts", "SLOTD_CONTRACTS", "./contracts", "folder of contract files (*.json)")
	return dir
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
