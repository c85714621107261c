package expr

import (
	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/parser"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
)

// prattNesting is the Pratt parser's recursion limit. The two parsers
// count nesting differently (ANTLR counts a sum in parentheses twice, the
// Pratt parser once), so with MaxNesting the Pratt parser would accept
// invariants that env refuses; from 16 on, some (1 + (1 + (…))). Deeper
// texts than it takes go to env's parser (TestPrattNestingWithinEnv).
const prattNesting = 12

// newPratt returns cel-go's Pratt parser configured as env's parser:
// env's macros, optional syntax and size limit, and a recursion limit of
// its own (prattNesting). cel-go's own parser tests hold it to the same
// ASTs as the ANTLR parser env uses (expression, ids, offsets, macro
// calls) for every expression that parses, with error messages of its
// own; it parses a short invariant several times faster, with a seventh of
// the garbage. cel.Env has no option for it, so compile parses with it
// here and hands the AST to env's checker (parsed, below). It is held to
// accept nothing env's parser refuses, with the same AST, by
// TestPrattParsesAsEnv, TestPrattNestingWithinEnv and FuzzPrattVsEnv;
// what it refuses goes to env's parser.
func newPratt(env *cel.Env) (*parser.Parser, error) {
	return parser.NewParser(
		parser.Macros(env.Macros()...),
		parser.EnableOptionalSyntax(true), // cel.OptionalTypes
		parser.ExpressionSizeCodePointLimit(MaxExpressionLength),
		parser.MaxRecursionDepth(prattNesting),
		parser.EnablePrattParser(true),
	)
}

// parsed is src parsed by p as an unchecked cel.Ast, nil when p refuses
// it (the caller then parses with the environment itself, whose ANTLR
// parser is the reference and whose messages are the ones a contract's
// author reads).
func parsed(p *parser.Parser, src string) (a *cel.Ast) {
	if prattDiffers(src) {
		return nil
	}
	defer func() {
		if recover() != nil { // env's parser then says what is wrong
			a = nil
		}
	}()
	source := common.NewTextSource(src)
	pa, errs := p.Parse(source)
	if len(errs.GetErrors()) > 0 {
		return nil
	}
	e, err := celast.ExprToProto(pa.Expr())
	if err != nil {
		return nil
	}
	info, err := celast.SourceInfoToProto(pa.SourceInfo())
	if err != nil {
		return nil
	}
	return cel.ParsedExprToAstWithSource(&exprpb.ParsedExpr{Expr: e, SourceInfo: info}, source)
}

// prattDiffers reports texts the Pratt parser reads where the grammar
// does not: 0X1 (a hex literal; the grammar has only 0x) and rb"", Rb"",
// RB"" (raw bytes; the grammar has the b first). Found by FuzzPrattVsEnv
// and by reading the two lexers; such texts go to env's parser.
func prattDiffers(src string) bool {
	for i := 0; i+1 < len(src); i++ {
		switch c := src[i]; {
		case c == '0' && src[i+1] == 'X':
			return true
		case (c == 'r' || c == 'R') && (src[i+1] == 'b' || src[i+1] == 'B'):
			if i+2 < len(src) && (src[i+2] == '"' || src[i+2] == '\'') {
				return true
			}
		}
	}
	return false
}
