// Package sftest is a strict parser of RFC 9651 structured-field Lists,
// for tests that check the fields the library writes (RateLimit,
// RateLimit-Policy). It follows the parsing algorithms of RFC 9651,
// section 4.2, for the bare items those fields may hold: Integer, String
// and Token (plus Boolean, needed for bare parameter keys). Every other
// bare item type (Decimal, Byte Sequence, Date, Display String) and inner
// lists are rejected, so a test never passes on a value it did not
// understand.
package sftest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kind is the type of a bare item.
type Kind uint8

// The bare item types the parser accepts.
const (
	Integer Kind = iota + 1
	String
	Token
	Boolean
)

// A BareItem is one parsed bare item: Int for Integer and Boolean (1 or 0),
// Str for String and Token.
type BareItem struct {
	Kind Kind
	Int  int64
	Str  string
}

// A Param is one parameter of an item.
type Param struct {
	Key   string
	Value BareItem
}

// An Item is a bare item with its parameters, in order.
type Item struct {
	Value  BareItem
	Params []Param
}

// Param returns the value of the parameter key and whether it is present.
func (it Item) Param(key string) (BareItem, bool) {
	for _, p := range it.Params {
		if p.Key == key {
			return p.Value, true
		}
	}
	return BareItem{}, false
}

// ParseList parses a field value as an RFC 9651 List. Several field lines
// are parsed joined with ", " (RFC 9651, section 4.2).
func ParseList(lines ...string) ([]Item, error) {
	p := &parser{s: strings.Join(lines, ", ")}
	p.skipSP()
	items, err := p.list()
	if err != nil {
		return nil, err
	}
	p.skipSP()
	if !p.done() {
		return nil, p.errorf("trailing characters")
	}
	return items, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) done() bool { return p.i >= len(p.s) }

func (p *parser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("sftest: at %d of %q: %s", p.i, p.s, fmt.Sprintf(format, args...))
}

func (p *parser) skipSP() {
	for !p.done() && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *parser) skipOWS() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// list implements RFC 9651, section 4.2.1.
func (p *parser) list() ([]Item, error) {
	var items []Item
	for !p.done() {
		if p.peek() == '(' {
			return nil, p.errorf("inner lists are not supported")
		}
		it, err := p.item()
		if err != nil {
			return nil, err
		}
		items = append(items, it)
		p.skipOWS()
		if p.done() {
			return items, nil
		}
		if p.peek() != ',' {
			return nil, p.errorf("expected ','")
		}
		p.i++
		p.skipOWS()
		if p.done() {
			return nil, p.errorf("trailing comma")
		}
	}
	return items, nil
}

// item implements RFC 9651, section 4.2.3.
func (p *parser) item() (Item, error) {
	v, err := p.bareItem()
	if err != nil {
		return Item{}, err
	}
	params, err := p.params()
	return Item{Value: v, Params: params}, err
}

func (p *parser) bareItem() (BareItem, error) {
	c := p.peek()
	switch {
	case c == '-' || isDigit(c):
		return p.integer()
	case c == '"':
		return p.str()
	case c == '*' || isAlpha(c):
		return p.token(), nil
	case c == '?':
		return p.boolean()
	}
	return BareItem{}, p.errorf("unsupported bare item starting with %q", c)
}

// params implements RFC 9651, section 4.2.3.2; a repeated key overwrites
// the earlier value in place.
func (p *parser) params() ([]Param, error) {
	var params []Param
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		v := BareItem{Kind: Boolean, Int: 1}
		if p.peek() == '=' {
			p.i++
			if v, err = p.bareItem(); err != nil {
				return nil, err
			}
		}
		params = setParam(params, Param{Key: key, Value: v})
	}
	return params, nil
}

func setParam(params []Param, np Param) []Param {
	for i := range params {
		if params[i].Key == np.Key {
			params[i].Value = np.Value
			return params
		}
	}
	return append(params, np)
}

// key implements RFC 9651, section 4.2.3.3.
func (p *parser) key() (string, error) {
	if c := p.peek(); c != '*' && !isLCAlpha(c) {
		return "", p.errorf("key must start with lcalpha or '*'")
	}
	start := p.i
	for !p.done() {
		c := p.s[p.i]
		if !isLCAlpha(c) && !isDigit(c) && !strings.ContainsRune("_-.*", rune(c)) {
			break
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

// integer implements the Integer branch of RFC 9651, section 4.2.4.
func (p *parser) integer() (BareItem, error) {
	start := p.i
	if p.peek() == '-' {
		p.i++
	}
	digits := p.i
	for !p.done() && isDigit(p.s[p.i]) {
		p.i++
	}
	switch n := p.i - digits; {
	case n == 0:
		return BareItem{}, p.errorf("integer without digits")
	case n > 15:
		return BareItem{}, p.errorf("integer longer than 15 digits")
	}
	if p.peek() == '.' {
		return BareItem{}, p.errorf("decimals are not supported")
	}
	v, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
	if err != nil {
		return BareItem{}, errors.Join(p.errorf("bad integer"), err)
	}
	return BareItem{Kind: Integer, Int: v}, nil
}

// str implements RFC 9651, section 4.2.5.
func (p *parser) str() (BareItem, error) {
	p.i++ // opening DQUOTE
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.done() || (p.s[p.i] != '"' && p.s[p.i] != '\\') {
				return BareItem{}, p.errorf("bad escape in string")
			}
			b.WriteByte(p.s[p.i])
			p.i++
		case c == '"':
			return BareItem{Kind: String, Str: b.String()}, nil
		case c < 0x20 || c > 0x7e:
			return BareItem{}, p.errorf("byte %#x not allowed in string", c)
		default:
			b.WriteByte(c)
		}
	}
	return BareItem{}, p.errorf("unterminated string")
}

// token implements RFC 9651, section 4.2.6.
func (p *parser) token() BareItem {
	start := p.i
	p.i++
	for !p.done() && (isTChar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
		p.i++
	}
	return BareItem{Kind: Token, Str: p.s[start:p.i]}
}

// boolean implements RFC 9651, section 4.2.8.
func (p *parser) boolean() (BareItem, error) {
	p.i++
	switch p.peek() {
	case '1', '0':
		v := int64(p.peek() - '0')
		p.i++
		return BareItem{Kind: Boolean, Int: v}, nil
	}
	return BareItem{}, p.errorf("bad boolean")
}

func isDigit(c byte) bool   { return '0' <= c && c <= '9' }
func isLCAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool   { return isLCAlpha(c) || 'A' <= c && c <= 'Z' }

// isTChar reports an RFC 9110 tchar.
func isTChar(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
