package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Parse reads a policy document, YAML or JSON (a JSON document is YAML
// too), strictly: an unknown field, a key given twice, a value of the
// wrong kind, a bad duration, an invalid limit ([core.Limit.Validate]) or
// tier ([core.ValidateTiers]) is an [*Error] naming file, the line and the
// field's path, and no Policy is returned. file is the name errors give
// the document (its path, for [Load]).
//
// A document written while it is read is refused when what was read so
// far is not a policy: JSON or a flow-style document misses its closing
// brace; a block-style YAML document must end with a line break, so one
// cut within a line is refused. A cut exactly at the end of a line that
// leaves a valid policy cannot be told by its content: write policy
// files whole, by renaming a finished file over the old one (as
// Kubernetes does with a ConfigMap's files), and [Watch] reads a file
// only once it has been quiet for a while.
func Parse(file string, data []byte) (*Policy, error) {
	p, err := parse(file, data)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// parse is Parse returning the concrete error type; nil when valid.
func parse(file string, data []byte) (*Policy, *Error) {
	if len(data) > MaxSize {
		return nil, &Error{File: file, Err: ErrTooLarge}
	}
	if err := checkText(file, data); err != nil {
		return nil, err
	}
	root, err := decode(file, data)
	if err != nil {
		return nil, err
	}
	w := walker{file: file}
	return w.document(root)
}

// decode parses data into the root node of its one document.
func decode(file string, data []byte) (*yaml.Node, *Error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := dec.Decode(&doc)
	switch {
	case errors.Is(err, io.EOF):
		return nil, &Error{File: file, Err: ErrEmpty}
	case !flowDocument(data) && !endsLine(data):
		return nil, &Error{File: file, Line: lineCount(data), Err: errors.New(
			"the last line has no line break: the file may be half-written; a policy file ends with a line break")}
	case err != nil:
		return nil, syntaxError(file, data, err)
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, &Error{File: file, Line: root.Line, Err: ErrEmpty}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, &Error{File: file, Line: next.Line, Err: errors.New("a second document: a policy file holds one")}
	case !errors.Is(err, io.EOF):
		return nil, syntaxError(file, data, err)
	}
	return root, nil
}

// flowDocument reports whether data is a JSON (or flow-style YAML)
// document, which ends with its closing bracket.
func flowDocument(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && (data[0] == '{' || data[0] == '[')
}

// endsLine reports whether data ends with a line break.
func endsLine(data []byte) bool {
	return len(data) > 0 && (data[len(data)-1] == '\n' || data[len(data)-1] == '\r')
}

// A path is the path of a field, "limiters.api.tiers.pro[1].burst".
type path string

func (p path) key(k string) path {
	if p == "" {
		return path(k)
	}
	return p + "." + path(k)
}

func (p path) index(i int) path { return p + path("["+strconv.Itoa(i)+"]") }

// A walker reads the nodes of one document into a Policy.
type walker struct {
	file string
}

// errAt returns the error of the field at path p, whose node is n.
func (w *walker) errAt(n *yaml.Node, p path, format string, args ...any) *Error {
	return &Error{File: w.file, Line: max(n.Line, 1), Path: string(p), Err: fmt.Errorf(format, args...)}
}

// A pair is one key and its value in a mapping.
type pair struct{ key, val *yaml.Node }

// plain refuses what a policy does not use and a walker would have to
// follow: anchors, aliases and explicit tags.
func (w *walker) plain(n *yaml.Node, p path) *Error {
	switch {
	case n.Kind == yaml.AliasNode:
		return w.errAt(n, p, "an alias (*%s): a policy spells every value out", n.Value)
	case n.Anchor != "":
		return w.errAt(n, p, "an anchor (&%s): a policy spells every value out", n.Anchor)
	case n.Style&yaml.TaggedStyle != 0:
		return w.errAt(n, p, "an explicit tag (%s): a policy's values are plain", n.Tag)
	}
	return nil
}

// mapping returns the pairs of the mapping n in document order, refusing
// anything else and keys given twice.
func (w *walker) mapping(n *yaml.Node, p path, what string) ([]pair, *Error) {
	if err := w.plain(n, p); err != nil {
		return nil, err
	}
	if n.Kind != yaml.MappingNode {
		return nil, w.errAt(n, p, "want %s (a mapping of fields), got %s", what, describe(n))
	}
	pairs := make([]pair, 0, len(n.Content)/2)
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if err := w.plain(k, p); err != nil {
			return nil, err
		}
		if k.Kind != yaml.ScalarNode || k.Tag == "!!null" {
			return nil, w.errAt(k, p, "want a key, got %s", describe(k))
		}
		if line, dup := seen[k.Value]; dup {
			return nil, w.errAt(k, p.key(k.Value), "given twice (first at line %d)", line)
		}
		seen[k.Value] = k.Line
		pairs = append(pairs, pair{k, v})
	}
	return pairs, nil
}

// list returns the items of the sequence n.
func (w *walker) list(n *yaml.Node, p path, what string) ([]*yaml.Node, *Error) {
	if err := w.plain(n, p); err != nil {
		return nil, err
	}
	if n.Kind != yaml.SequenceNode {
		return nil, w.errAt(n, p, "want %s (a list), got %s", what, describe(n))
	}
	return n.Content, nil
}

// unknown is the error of the field k, which a what does not have.
func (w *walker) unknown(k *yaml.Node, p path, what string, fields string) *Error {
	return w.errAt(k, p, "unknown field %q: %s has %s", k.Value, what, fields)
}

// scalar returns the text of the scalar n, which must not be null.
func (w *walker) scalar(n *yaml.Node, p path, want string) (string, *Error) {
	if err := w.plain(n, p); err != nil {
		return "", err
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", w.errAt(n, p, "want %s, got %s", want, describe(n))
	}
	return n.Value, nil
}

// wholeNumber matches the integers a policy writes: decimal, without
// leading zeros (which YAML 1.1 reads as octal), with optional '_'
// between digits.
var wholeNumber = regexp.MustCompile(`^[-+]?(0|[1-9](_?[0-9])*)$`)

// integer returns the whole number n holds.
func (w *walker) integer(n *yaml.Node, p path) (int64, *Error) {
	s, err := w.scalar(n, p, "a whole number")
	if err != nil {
		return 0, err
	}
	if n.Tag == "!!str" || !wholeNumber.MatchString(s) {
		return 0, w.errAt(n, p, "want a whole number in decimal, got %s", describe(n))
	}
	v, perr := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	if perr != nil {
		return 0, w.errAt(n, p, "%s is out of range", s)
	}
	return v, nil
}

// describe names what n is, for errors.
func describe(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.AliasNode:
		return "an alias"
	case n.Tag == "!!null":
		return "nothing"
	case n.Tag == "!!str":
		return strconv.Quote(n.Value)
	}
	return n.Value
}

// Fields of the document, for the errors about unknown ones.
const (
	topFields     = "version, and limiters (or, for one limiter, default_tier and tiers)"
	limiterFields = "default_tier and tiers"
)

// document reads the root mapping.
func (w *walker) document(root *yaml.Node) (*Policy, *Error) {
	pairs, err := w.mapping(root, "", "a policy")
	if err != nil {
		return nil, err
	}
	var limiters *pair
	var single []pair
	version := false
	for i, kv := range pairs {
		switch kv.key.Value {
		case "version":
			if err := w.version(kv.val); err != nil {
				return nil, err
			}
			version = true
		case "limiters":
			limiters = &pairs[i]
		case "default_tier", "tiers":
			single = append(single, kv)
		default:
			return nil, w.unknown(kv.key, path(kv.key.Value), "a policy", topFields)
		}
	}
	switch {
	case !version:
		return nil, w.errAt(root, "version", "missing: a policy starts with version: %d", Version)
	case limiters != nil && len(single) > 0:
		return nil, w.errAt(single[0].key, path(single[0].key.Value),
			"beside limiters (line %d): describe each limiter under limiters, or one limiter alone without them", limiters.key.Line)
	case limiters != nil:
		return w.limiters(limiters.val)
	case len(single) == 0:
		return nil, w.errAt(root, "limiters", "missing: a policy has limiters (or, for one limiter, tiers)")
	}
	lp, err := w.limiter("", root, single, "")
	if err != nil {
		return nil, err
	}
	return &Policy{file: w.file, limiters: []*limiterPolicy{lp}}, nil
}

// Version is the version of the policy format this package reads: a
// document says it in its version field.
const Version = 1

func (w *walker) version(n *yaml.Node) *Error {
	v, err := w.integer(n, "version")
	if err != nil {
		return err
	}
	if v != Version {
		return w.errAt(n, "version", "version %d is not known: this build reads version %d", v, Version)
	}
	return nil
}

// maxNameLen bounds the names of limiters, as core bounds tier names.
const maxNameLen = 64

// limiters reads the mapping of limiters by name.
func (w *walker) limiters(n *yaml.Node) (*Policy, *Error) {
	pairs, err := w.mapping(n, "limiters", "the limiters by name")
	if err != nil {
		return nil, err
	}
	if len(pairs) == 0 {
		return nil, w.errAt(n, "limiters", "empty: a policy has at least one limiter")
	}
	p := &Policy{file: w.file}
	for _, kv := range pairs {
		lp := path("limiters").key(kv.key.Value)
		if msg := nameProblem(kv.key.Value); msg != "" {
			return nil, w.errAt(kv.key, lp, "limiter name %s", msg)
		}
		fields, err := w.mapping(kv.val, lp, "a limiter")
		if err != nil {
			return nil, err
		}
		l, err := w.limiter(kv.key.Value, kv.val, fields, lp)
		if err != nil {
			return nil, err
		}
		l.line = kv.key.Line // where its name is
		p.limiters = append(p.limiters, l)
	}
	return p, nil
}

// nameProblem says what makes name unfit to name a limiter ("" when
// nothing): the rules of core's tier names.
func nameProblem(name string) string {
	if name == "" {
		return "must not be empty"
	}
	if len(name) > maxNameLen {
		return fmt.Sprintf("%q is longer than %d bytes", name, maxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Sprintf("%q has byte %q at %d; use letters, digits, '_', '-' and '.'", name, c, i)
		}
	}
	return ""
}
