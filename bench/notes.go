package main

import "strings"

// The report is generated, numbers and all; the one hand-written part is
// the text between these markers, which a regeneration keeps verbatim.
const (
	notesOpen  = "<!-- notes -->"
	notesClose = "<!-- /notes -->"
)

const defaultNotes = "\n_Hand-written notes go here; `make bench` keeps this text._\n"

// extractNotes returns the text between the markers of a previous report,
// or the placeholder when there is none.
func extractNotes(old string) string {
	_, rest, ok := strings.Cut(old, notesOpen)
	if !ok {
		return defaultNotes
	}
	notes, _, ok := strings.Cut(rest, notesClose)
	if !ok {
		return defaultNotes
	}
	return notes
}
