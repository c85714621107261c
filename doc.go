// Package contractguard guards HTTP handlers with declarative contracts.
//
// For each request, a [Guard] finds the contract for the method and path,
// reads the body strictly, checks it against the contract's JSON Schema
// (draft-07) and evaluates the contract's invariants, business rules written
// in CEL. A request that passes reaches the handler with the very bytes that
// were checked; one that fails is rejected with a JSON error body and the
// handler never runs.
//
//	g, err := contractguard.New(contractguard.Options{ContractsDir: "contracts"})
//	if err != nil {
//		log.Fatal(err) // every problem of every contract, with file:line
//	}
//	http.ListenAndServe(":8080", g.Middleware(mux))
//
// # File contracts
//
// A contract is a YAML or JSON document (several per YAML file, separated
// by ---; an array in a JSON file), or a [Contract] in code:
//
//	endpoint: /api/orders/:orderId/items
//	method: POST
//	schema:
//	  type: object
//	  required: [sku, quantity]
//	  additionalProperties: false
//	  properties:
//	    sku: {type: string}
//	    quantity: {type: integer, minimum: 1}
//	invariants:
//	  - expr: request.body.quantity <= 100
//	    message: at most 100 items per line
//
// The format is published as the JSON Schema [PolicySchema]
// (schema/policy.v0.1.json in the module). Unknown keys, a missing endpoint
// or method, an invariant without a message, a schema or an expression that
// does not compile, and two contracts for one method and route are errors
// from [New], each a [*LoadError] naming file, line and contract.
//
// Endpoints are matched segment by segment; :name and {name} match one
// segment, and a static segment beats a parameter. Paths are read as
// leniently as any router reads them: trailing and repeated slashes, dot
// segments and percent-encoding do not get a request past its contract.
//
// Invariants see request.body, request.params, request.query,
// request.headers (lower-case names), request.method, request.path and
// context.user (from Options.User). A JSON number is an int where the schema
// says integer, a double where it says number, and otherwise an int when it
// is integral. Every evaluation runs under a cost limit; an invariant that
// fails to evaluate counts as false.
//
// # Struct tags
//
// A request type can be the contract: [Handle], [NewHandler] and the chi
// helpers [Get], [Post], [Put], [Patch] and [Delete] take a [HandlerFunc]
// whose third argument is the body decoded into T. T's schema is reflected
// from its json and jsonschema tags (or read from a file named by a blank
// field's cg:"schema=…" tag, in Options.SchemaFS); its rules are cg tags:
//
//	type Transfer struct {
//		_      struct{} `cg:"cel=data.from != data.to,msg=cannot transfer to the same account"`
//		From   string   `json:"from" jsonschema:"format=uuid"`
//		To     string   `json:"to" jsonschema:"format=uuid"`
//		Amount float64  `json:"amount" jsonschema:"minimum=0.01" cg:"cel=self <= 10000,msg=at most 10000 per transfer"`
//	}
//
// Rules are type-checked against T when the handler is built: data is the
// struct a rule is declared on, self the tagged field. Rules of nested
// types apply wherever the type appears, with the value's path in errors.
// A file contract for the same route is enforced as well, each contract
// once per request.
//
// # Errors
//
// A rejection is a [*Violation], written by default as
//
//	{"error":"CONTRACT_VIOLATION","code":"SCHEMA_INVALID",
//	 "details":[{"path":"/email","message":"must be a valid email address"}]}
//
// with one of these codes and statuses (Options.OnReject replaces the
// writer):
//
//   - [CodeSchemaInvalid], 400: the body fails the schema (or is a value
//     a typed handler's Go type cannot hold); every failure, by path.
//   - [CodeMalformedJSON], 400: the body is not acceptable JSON.
//   - [CodeInvariantViolated], 422: an invariant or a cg rule is false, or
//     fails to evaluate; details in contract order.
//   - [CodePayloadTooLarge], 413: the body is over Options.MaxBodyBytes.
//   - [CodeUnsupportedMediaType], 415: a Content-Type that is not JSON
//     (charset utf-8) on a contract with a schema or whose rules read the
//     body, and, with Options.VulnerabilityScan, a JSON one with another
//     charset or parameters mime does not read on any; or a
//     Content-Encoding other than gzip (or x-gzip), deflate or identity.
//   - [CodeVulnerabilityDetected], 403: Options.VulnerabilityScan flags a
//     value.
//   - [CodeNoContract], 403: Options.RequireContract is on and no
//     contract matches.
//
// # Learning mode, sink protection, metrics
//
// A contract in mode learn (mode: learn, or every contract with
// Options.LearningMode) is checked as in enforcement, but a request it
// would reject reaches the handler and is reported instead
// ([Guard.LearningReport], Options.OnObserve); with learning on, the
// guard also learns contracts from the requests no contract matches
// ([Guard.Learned]). With Options.SinkProtection, a passing request's input
// travels in its context to the wrappers of the sink package, which block a
// SQL query, command, file open or outbound request the input would
// change. Both are paid features: Options.LicenseKey must entitle them, or
// [New] says which and why. [Guard.Observe] and [Guard.Stats] feed the
// Prometheus and OpenTelemetry exporters (modules of their own); metrics are
// free.
//
// # Security
//
// The guard is meant to be the first handler in the chain; middleware that
// rewrites the method or path (X-HTTP-Method-Override, say) must run before
// it. The body is read once, at most Options.MaxBodyBytes, and parsed
// strictly: invalid UTF-8, lone surrogates, trailing data, duplicate keys,
// keys equal but for letter case, nesting deeper than Options.MaxDepth,
// number literals over 1,000 characters and exponents beyond ±1000 are
// rejected, so that no JSON parser
// behind the guard can read a body differently from the guard. Schemas are
// never fetched over the network.
package contractguard
