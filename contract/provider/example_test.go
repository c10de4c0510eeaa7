package provider_test

import (
	"fmt"
	"log"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/provider"
)

// Example exports the dispute example's contract as an OpenAI strict
// function definition and lints the shipped contracts against every
// provider's strict mode.
func Example() {
	cat, err := contract.LoadDir("../../contracts")
	if err != nil {
		log.Fatal(err)
	}
	tool, err := provider.Export(cat.Get("bank.open_dispute"), provider.OpenAI)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tool.Name)
	findings, err := provider.LintDir("../../contracts")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("errors:", provider.HasErrors(findings))
	// Output:
	// bank_open_dispute
	// errors: false
}
