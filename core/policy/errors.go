package policy

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// An Error says what is wrong with a policy document and where: the file,
// the line and the path of the field, as in
//
//	policy.yaml:14: limiters.api.tiers.pro[1].burst: Burst 5000000 refills in ...
//
// [Parse] and [Load] return every problem of a document as an *Error.
type Error struct {
	// File is the name the document was parsed under.
	File string
	// Line is the line of the field, from 1. It is 0 only when no line
	// can be named: a file that is empty ([ErrEmpty]) or too large
	// ([ErrTooLarge]), or a syntax error the YAML parser placed nowhere
	// (its message says so).
	Line int
	// Path is the field's path, "limiters.api.tiers.pro[1].burst"
	// (indices from 0); empty for the document as a whole.
	Path string
	// Err is what is wrong.
	Err error
}

// Error returns "file:line: path: what", leaving out what is not known.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

var (
	// ErrEmpty is the error of a document that holds no policy: nothing,
	// or only comments. A file truncated to nothing while it was being
	// written reads so.
	ErrEmpty = errors.New("the file is empty: no policy document in it")
	// ErrTooLarge is the error of a document over [MaxSize].
	ErrTooLarge = fmt.Errorf("the file is larger than %d bytes, the most a policy may be", MaxSize)
)

// MaxSize is the largest policy document [Parse] reads: 1 MiB, hundreds of
// times what a policy of every limiter of a large API takes.
const MaxSize = 1 << 20

// yamlLine finds the line in the YAML parser's "yaml: line 12: ..."
// messages.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// The problems the YAML parser (yaml/v3's parserc.go) reports, as opposed
// to its scanner (scannerc.go): the parser gives lines counted from 0, the
// scanner from 1, and neither names line 0, the first.
var (
	parserProblems = []string{
		"did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected '-' indicator",
		"did not find expected <document start>", "did not find expected <stream-start>", "did not find expected key",
		"did not find expected node content", "found duplicate %TAG directive", "found duplicate %YAML directive",
		"found incompatible YAML document", "found undefined tag handle",
	}
	scannerProblems = []string{
		"block sequence entries are not allowed", "could not find expected", "did not find", "exceeded max depth",
		"found a tab character", "found an incorrect", "found an indentation indicator", "found character that cannot start",
		"found extremely long", "found invalid Unicode", "found unexpected", "found unknown", "mapping keys are not allowed",
		"mapping values are not allowed",
	}
)

// syntaxError turns an error of the YAML parser on data into an *Error
// at the line the parser named (the last line when it named the end of
// the stream, beyond it).
func syntaxError(file string, data []byte, err error) *Error {
	msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		msg, line = m[2], atoi(m[1])
		if slices.Contains(parserProblems, msg) {
			line++
		}
	} else if known(msg) {
		line = 1
	}
	if line == 0 {
		return &Error{File: file, Err: fmt.Errorf("%s (%s)", msg, noLine)}
	}
	return &Error{File: file, Line: min(line, lineCount(data)), Err: errors.New(msg)}
}

// noLine ends the message of a syntax error the YAML parser placed
// nowhere.
const noLine = "the YAML parser named no line"

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// known reports whether msg is a problem the YAML parser or scanner
// reports with a place in the document.
func known(msg string) bool {
	if slices.Contains(parserProblems, msg) {
		return true
	}
	for _, p := range scannerProblems {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// checkText reports the first byte the YAML reader refuses, with its line,
// which the reader's own error does not name: bytes that are not UTF-8,
// and control characters (YAML allows tab, line feed, carriage return and
// the printable characters).
func checkText(file string, data []byte) *Error {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return &Error{File: file, Line: line, Err: fmt.Errorf("byte %#x is not UTF-8: a policy is UTF-8 text", data[i])}
		case !printable(r):
			return &Error{File: file, Line: line, Err: fmt.Errorf("control character %U: a policy is text (tabs, line breaks and printable characters)", r)}
		}
		if breaksLine(data, i, r) {
			line++
		}
		i += size
	}
	return nil
}

// printable reports whether YAML allows r in a document (YAML 1.2, 5.1).
func printable(r rune) bool {
	switch {
	case r == '\t', r == '\n', r == '\r', r == 0x85:
		return true
	case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xd7ff:
		return true
	case r >= 0xe000 && r <= 0xfffd, r >= 0x10000 && r <= 0x10ffff:
		return true
	}
	return false
}

// breaksLine reports whether r, at data[i], ends a line as the YAML
// reader counts them: a line feed, a carriage return not followed by one,
// and the Unicode breaks NEL, LS and PS.
func breaksLine(data []byte, i int, r rune) bool {
	switch r {
	case '\n', 0x85, 0x2028, 0x2029:
		return true
	case '\r':
		return i+1 >= len(data) || data[i+1] != '\n'
	}
	return false
}

// lineCount returns the number of the last line of data: the line a
// complaint about the end of the file names.
func lineCount(data []byte) int {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if breaksLine(data, i, r) && i+size < len(data) {
			line++
		}
		i += size
	}
	return line
}
