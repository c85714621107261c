package expr

import (
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/parser"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
)

// newPratt returns cel-go's Pratt parser configured as env's parser:
// env's macros, optional syntax and the limits NewEnv sets. cel-go's own
// parser tests hold it to the same ASTs as the ANTLR parser env uses
// (expression, ids, offsets, macro calls) for every expression that
// parses, with error messages of its own; it parses a short invariant
// several times faster, with a seventh of the garbage. cel.Env has no
// option for it, so the loader parses with it here and hands the AST to
// env's checker (parsed, below). TestPrattParsesAsEnv and FuzzPrattVsEnv
// hold the two parsers to the same ASTs and the same verdicts.
func newPratt(env *cel.Env) (*parser.Parser, error) {
	return parser.NewParser(
		parser.Macros(env.Macros()...),
		parser.EnableOptionalSyntax(true), // cel.OptionalTypes
		parser.ExpressionSizeCodePointLimit(MaxExpressionLength),
		parser.MaxRecursionDepth(MaxNesting),
		parser.EnablePrattParser(true),
	)
}

// parsed is src parsed by p as an unchecked cel.Ast, nil when p refuses
// it (the caller then parses with the environment itself, whose ANTLR
// parser is the reference and whose messages are the ones a contract's
// author reads).
func parsed(p *parser.Parser, src string) *cel.Ast {
	if strings.Contains(src, "0X") {
		// The Pratt parser reads 0X1 as a hex literal; the grammar has
		// only 0x (FuzzPrattVsEnv found it).
		return nil
	}
	source := common.NewTextSource(src)
	a, errs := p.Parse(source)
	if len(errs.GetErrors()) > 0 {
		return nil
	}
	e, err := celast.ExprToProto(a.Expr())
	if err != nil {
		return nil
	}
	info, err := celast.SourceInfoToProto(a.SourceInfo())
	if err != nil {
		return nil
	}
	return cel.ParsedExprToAstWithSource(&exprpb.ParsedExpr{Expr: e, SourceInfo: info}, source)
}
