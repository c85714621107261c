package expr

import (
	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/parser"
)

// The parse fast path. cel-go's ANTLR parser, the one cel.Env parses
// with, is the reference; it takes about a fifth of loading a contract.
// cel-go also ships a Pratt parser (parser.EnablePrattParser), several
// times faster, which cel.Env does not offer. It does not read every text
// as ANTLR does (0X1, rb'', and nestings it counts differently are known
// cases), so it is used only on texts of the plain subset below, where
// whatever it accepts the environment's parser accepts too, with the same
// AST (expression, ids, start positions, macro calls): TestPrattSubset and
// FuzzPrattVsEnv hold it. Any other text, and any text that does not
// parse or check, goes to the environment's own parser, whose verdict and
// message stand. What it parses is checked without a trip through
// protobuf (prattChecked).

// maxPlainTokens bounds the tokens of a plain text. Both parsers count
// nesting from 1 for the outermost expression, and every further level
// either counts (a parenthesis, a list, a selection, a call, an index, an
// operator of a chain) takes two tokens or more: an opening bracket and
// its closing one, or an operator and its operand. A plain text therefore
// nests at most maxPlainTokens/2 + 1 = 16 deep, half of MaxNesting, so
// neither parser's limit is ever what decides on one
// (TestPrattSubset_HalfTheLimit parses every plain text of the tests with
// both limits at 16).
const maxPlainTokens = MaxNesting - 2

// plain reports whether src is in the subset where the Pratt parser is
// used: ASCII; names, decimal numbers (at most 16 characters: no overflow, no
// exponent, no hex, no unsigned suffix) and quoted strings without
// escapes or prefixes (no raw, bytes or triple-quoted strings); the
// operators == != < <= > >= && || ! + - * / % and in; parentheses, square
// brackets, commas and selections (a dot right after a name, a string or a
// closing bracket, and right before a name); blanks, tabs and line feeds;
// at most maxPlainTokens tokens; never two operands in a row. No comments,
// maps, messages, conditionals, optional syntax, leading dots, escaped
// names or reserved words. It reads the text once and allocates nothing.
func plain(src string) bool {
	if len(src) > MaxExpressionLength {
		return false
	}
	const (
		none     = iota
		operand  // a name, a number, a string, or a closing bracket
		operator // an operator, an opening bracket, a comma, a dot
	)
	tokens, prev, blank := 0, none, false
	for i := 0; i < len(src); {
		c := src[i]
		if c == ' ' || c == '\t' || c == '\n' {
			i, blank = i+1, true
			continue
		}
		next := operator
		switch {
		case isWordByte(c) && !isDigit(c):
			j := i + 1
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			switch word := src[i:j]; {
			case word == "in":
				if prev != operand {
					return false
				}
			case reservedWords[word], prev == operand:
				return false
			default:
				next = operand
			}
			i = j
		case isDigit(c):
			j := i
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			if c == '0' && j > i+1 {
				return false // 01
			}
			if j < len(src) && src[j] == '.' {
				k := j + 1
				for k < len(src) && isDigit(src[k]) {
					k++
				}
				if k == j+1 {
					return false // 1. or 1.x
				}
				j = k
			}
			if prev == operand || j-i > 16 || j < len(src) && (isWordByte(src[j]) || src[j] == '.' || src[j] == '\'' || src[j] == '"') {
				return false
			}
			i, next = j, operand
		case c == '\'' || c == '"':
			if prev == operand {
				return false // a prefix (r'', b''), or two operands in a row
			}
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] < ' ' || src[j] > '~' || src[j] == '\\' {
					return false
				}
				j++
			}
			if j == len(src) {
				return false // not closed
			}
			j++
			if j < len(src) && (src[j] == c || isWordByte(src[j])) {
				return false // ''' opens a triple-quoted string; 'a'b
			}
			i, next = j, operand
		case c == '.':
			if prev != operand || blank || i+1 == len(src) || !isWordByte(src[i+1]) || isDigit(src[i+1]) {
				return false
			}
			i++
		case c == ')' || c == ']':
			i, next = i+1, operand
		case c == '(' || c == '[' || c == ',':
			i++
		default:
			n := operatorAt(src, i)
			if n == 0 {
				return false
			}
			i += n
		}
		prev, blank = next, false
		if tokens++; tokens > maxPlainTokens {
			return false
		}
	}
	return tokens > 0
}

// operatorAt is the length of the operator of the plain subset at src[i],
// 0 if there is none.
func operatorAt(src string, i int) int {
	two := ""
	if i+1 < len(src) {
		two = src[i : i+2]
	}
	switch two {
	case "==", "!=", "<=", ">=", "&&", "||":
		return 2
	case "//":
		return 0 // a comment
	}
	switch src[i] {
	case '<', '>', '!', '+', '-', '*', '/', '%':
		return 1
	}
	return 0 // =, &, |, ?, :, {, }, `, \, and any other byte
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// reservedWords are CEL's reserved identifiers, which no plain text holds
// (the parsers refuse them, each with its own message).
var reservedWords = map[string]bool{
	"as": true, "break": true, "const": true, "continue": true, "else": true, "for": true,
	"function": true, "if": true, "import": true, "let": true, "loop": true, "package": true,
	"namespace": true, "return": true, "var": true, "void": true, "while": true,
}

// astParser is what parses with the Pratt parser (a *parser.Parser).
type astParser interface {
	Parse(common.Source) (*celast.AST, *common.Errors)
}

// newPratt returns cel-go's Pratt parser configured as env's parser.
func newPratt(env *cel.Env) (*parser.Parser, error) { return newParser(env, MaxNesting, true) }

// newParser returns a parser configured as env's (its macros, optional
// syntax and size limit) with a nesting limit of depth: the Pratt parser,
// or the ANTLR parser env itself uses.
func newParser(env *cel.Env, depth int, pratt bool) (*parser.Parser, error) {
	return parser.NewParser(
		parser.Macros(env.Macros()...),
		parser.EnableOptionalSyntax(true), // cel.OptionalTypes
		parser.ExpressionSizeCodePointLimit(MaxExpressionLength),
		parser.MaxRecursionDepth(depth),
		parser.EnablePrattParser(pratt),
	)
}

// prattParse is src parsed by p when src is plain and p reads it without
// error; nil otherwise (the caller then parses with the environment
// itself).
func prattParse(p astParser, src string) (a *celast.AST, source common.Source) {
	if !plain(src) {
		return nil, nil
	}
	defer func() {
		if recover() != nil { // the environment's parser says what is wrong
			a, source = nil, nil
		}
	}()
	source = common.NewTextSource(src)
	pa, errs := p.Parse(source)
	if len(errs.GetErrors()) > 0 {
		return nil, nil
	}
	return pa, source
}

// prattChecked is src parsed by e's Pratt parser and checked in env, when
// src is plain, the parser reads it and env checks it; nil otherwise (the
// caller then parses and checks with the environment itself, for the
// reference's verdict and message).
//
// cel.Env makes a parsed AST a cel.Ast only through protobuf
// (cel.ParsedExprToAst: the AST converted to its proto and back, 4.5% of
// the samples of loading 1,000 distinct contracts). Its StaticOptimizer
// checks, in the environment, whatever AST an optimizer returns: an
// optimizer that returns the Pratt parser's AST makes it a checked
// cel.Ast with nothing converted (the optimizer's own copying and
// renumbering cost back part of it: −2.0% of a load's instructions net).
// The optimizer renumbers the ids, as after any optimization;
// TestPrattChecked_AsEnv holds the result to env's own parse checked,
// with its ids renumbered the same way, and
// TestCompile_PlainTextsTakeThePrattParser holds checked to taking this
// way for the repository's plain invariants. The AST keeps the Pratt
// parser's stop positions, which differ from ANTLR's ("-1" stops after
// the 1 in one, at the - in the other; the proto path kept none): nothing
// in cel-go v0.33.2 or here reads a stop (SourceInfo.GetStopLocation has
// no caller).
func (e *Env) prattChecked(env *cel.Env, src string) (a *cel.Ast) {
	pa, source := prattParse(e.pratt, src)
	if pa == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			a = nil
		}
	}()
	opt, err := cel.NewStaticOptimizer(asParsed{pa}, cel.OptimizeWithSource(source))
	if err != nil {
		return nil
	}
	a, iss := opt.Optimize(env, e.blank)
	if iss.Err() != nil {
		return nil
	}
	return a
}

// asParsed is an optimizer that replaces whatever it is given with an
// AST parsed already.
type asParsed struct{ a *celast.AST }

func (p asParsed) Optimize(*cel.OptimizerContext, *celast.AST) *celast.AST { return p.a }
