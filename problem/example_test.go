package problem_test

import (
	"encoding/json"
	"fmt"

	"github.com/slotd/slotd/problem"
)

// Example shows the problem a call to a tool slotd does not serve gets: the
// allowed values are listed, and a card number in the input never is.
func Example() {
	err := problem.UnknownTool("bank.open_dispte 4111 1111 1111 1111", []string{"bank.block_card", "bank.open_dispute"})
	b, _ := json.MarshalIndent(err.Problem, "", "  ")
	fmt.Println(err.Kind)
	fmt.Println(string(b))
	// Output:
	// unknown-tool
	// {
	//   "type": "https://slotd.dev/problems/unknown-tool",
	//   "title": "Unknown tool",
	//   "status": 0,
	//   "detail": "no contract named \"bank.open_dispte •••• 1111\"",
	//   "retryable": false,
	//   "owner_action_required": true,
	//   "errors": [
	//     {
	//       "pointer": "/tool",
	//       "input": "\"bank.open_dispte •••• 1111\"",
	//       "message": "unknown tool",
	//       "allowed_values": [
	//         "bank.block_card",
	//         "bank.open_dispute"
	//       ]
	//     }
	//   ]
	// }
}
