// Package recipes holds the code of docs/recipes.md: one file per recipe,
// each with an example_test.go-style Example that runs it on the memory
// store (go test ./examples/recipes), or, for the Redis Cluster and
// Sentinel recipe, code that go build compiles but no test runs. The
// document quotes this code; TestRecipesQuoteThisPackage fails when a quote
// no longer matches it.
//
// Every recipe uses the net/http adapter; the same core options serve the
// gin, echo and chi adapters unchanged.
package recipes
