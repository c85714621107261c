package sink_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/contractguard/contractguard/internal/taint"
	"github.com/contractguard/contractguard/sink"
)

// requestContext stands for r.Context() in a handler behind a guard with
// SinkProtection on: the guard records the request's input in it.
func requestContext(method, route, rawQuery string) context.Context {
	return taint.NewContext(context.Background(), &taint.Request{Method: method, Route: route, RawQuery: rawQuery})
}

func ExampleCheckSQL() {
	ctx := requestContext("GET", "/users", "name="+url.QueryEscape("x' OR '1'='1"))

	// A handler that builds its query by concatenation:
	err := sink.CheckSQL(ctx, "SELECT * FROM users WHERE name = 'x' OR '1'='1'", sink.SQLite)
	fmt.Println(errors.Is(err, sink.ErrBlocked))
	fmt.Println(err)

	// The same value quoted as a literal, or passed as a parameter, is a value:
	fmt.Println(sink.CheckSQL(ctx, "SELECT * FROM users WHERE name = 'x'' OR ''1''=''1'", sink.SQLite))
	fmt.Println(sink.CheckSQL(ctx, "SELECT * FROM users WHERE name = ?", sink.SQLite))
	// Output:
	// true
	// sink: sql call blocked: input from query "name" opens or closes a string literal (GET /users)
	// <nil>
	// <nil>
}

func ExampleCommand() {
	ctx := requestContext("POST", "/thumbnails", "file="+url.QueryEscape("a.png; rm -rf ~"))
	_, err := sink.Command(ctx, "sh", "-c", "convert a.png; rm -rf ~ thumb.png")
	fmt.Println(err)

	ctx = requestContext("POST", "/clone", "repo="+url.QueryEscape("--upload-pack=touch /tmp/x"))
	_, err = sink.Command(ctx, "git", "clone", "--upload-pack=touch /tmp/x", "/srv/repo")
	fmt.Println(err)
	// Output:
	// sink: shell call blocked: input from query "file" adds shell syntax to the script (POST /thumbnails)
	// sink: shell call blocked: input from query "repo" becomes an option of git (POST /clone)
}

func ExampleFiles() {
	uploads := filepath.Join(os.TempDir(), "uploads")
	ctx := requestContext("GET", "/files/:name", "name="+url.QueryEscape("../../etc/passwd"))
	_, err := sink.Open(ctx, filepath.Join(uploads, "../../etc/passwd"))
	fmt.Println(err)

	// A handler that serves anything below uploads/ says so:
	files := sink.Files{Base: uploads}
	ctx = requestContext("GET", "/files/:name", "name="+url.QueryEscape("2024/../report.v2.pdf"))
	fmt.Println(files.Check(ctx, filepath.Join(uploads, "2024/../report.v2.pdf")))
	// Output:
	// sink: file call blocked: input from query "name" climbs out of its directory with .. (GET /files/:name)
	// <nil>
}

func ExampleTransport() {
	client := &http.Client{Transport: sink.Transport(nil)}
	ctx := requestContext("POST", "/webhooks", "url="+url.QueryEscape("http://169.254.169.254/latest/meta-data/"))
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://169.254.169.254/latest/meta-data/", nil)
	_, err := client.Do(req)
	var blocked *sink.BlockedError
	fmt.Println(errors.As(err, &blocked))
	fmt.Println(blocked)
	// Output:
	// true
	// sink: http call blocked: input from query "url" points the request at cloud metadata (POST /webhooks)
}
