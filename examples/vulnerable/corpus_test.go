package main

// The corpora the application is attacked with: for each resource, each
// input (slot) of its handler, the classic exploits of that slot and the
// benign values a user sends there. Every value goes through every input
// location (body value, body key, query, path parameter, header, cookie)
// that can carry it.
//
// Whether a value is an attack that works is not taken on trust: the
// control run (no protection) decides it against what the handler means
// to do (effective and intended, main_test.go). An attack that does nothing to this handler (a single
// quote inside the name's double quotes; a NUL byte, which Go refuses in
// file names) is "inert" and counted apart; so is a benign value the
// handler itself cannot serve (L'Aquila concatenated into a '…' literal is
// a syntax error with or without protection).
//
// {port} is the internal server's port (it listens on 127.0.0.1 and ::1),
// {base} the folder files are served from.

// target is one sink's handler and its corpora.
type target struct {
	sink, res string
	slots     []slotCorpus
}

type slotCorpus struct {
	slot            string
	attacks, benign []string
}

var targets = []target{
	{sink: "sql", res: "users", slots: []slotCorpus{
		{slot: "name", // name = %q: Go's quoting, which SQLite reads as "…" with no escapes
			attacks: []string{
				`" OR 1=1 --`,
				`" OR 1=1 /*`,
				`"/**/OR/**/1=1--`,
				`" OR name LIKE '%' --`,
				`" UNION SELECT id, password, api_key FROM secrets --`,
				`" AND 0 UNION SELECT 1, sqlite_version(), 3 --`,
				`" || (SELECT password FROM secrets) --`,
				`"; DROP TABLE users; --`,
				`"; DELETE FROM users --`,
				`\" OR 1=1 --`,    // %q doubles the backslash; the quote still ends the name
				"a\t\" OR 1=1 --", // %q writes the tab as \t: the input is not in the query as sent
				`' OR '1'='1`,     // inside "…": text
				`'; DROP TABLE users; --`,
			},
			benign: []string{"O'Brien", "D'Angelo", "Zoë", "José María", "Anne-Marie", "李雷", "ada", "bob",
				"O'Brien-Smith", "Dr. Who", "Tom & Jerry", "50% off", "ada@example.com", "it's 5 o'clock", "Jean--Luc",
				`Dwayne "The Rock" Johnson`}, // %q's \" is no escape to SQLite: the handler fails on it
		},
		{slot: "city", // city = '…'
			attacks: []string{
				`' OR '1'='1`,
				`' OR ''='`,
				`' OR 1=1 --`,
				`' OR 1=1/*`,
				`'/**/OR/**/1=1--`,
				`admin'--`,
				`x' OR city LIKE '%`,
				`Dub'||'lin`,
				`' OR 1=1 LIMIT 1 OFFSET 2 --`,
				`' UNION SELECT id, password, api_key FROM secrets --`,
				`' AND 1=0 UNION SELECT 1, name, sql FROM sqlite_master --`,
				`' || (SELECT password FROM secrets) || '`,
				`'; DROP TABLE users; --`,
				`'; UPDATE users SET name = 'pwned'; --`,
				`London' --`,
			},
			benign: []string{"Dublin", "London", "São Paulo", "Zürich", "北京", "Aix-en-Provence", "St. Gallen",
				"New York", "Rome", "Berlin",
				"L'Aquila", "Côte d'Ivoire"}, // a quote in '…': the handler fails on these
		},
		{slot: "id", // id = … (a number's place)
			attacks: []string{
				`1 OR 1=1`,
				`-1 OR id>0`,
				`42 OR name LIKE '%'`,
				`1/**/OR/**/1=1`,
				`2-1`,
				`(SELECT 1)`,
				`0 UNION SELECT id, password, api_key FROM secrets`,
				`1 AND 0 UNION ALL SELECT 1, sqlite_version(), 3`,
				`0; DROP TABLE users --`,
				`1; DELETE FROM users --`,
				`1 --`,
				`id`, // WHERE id = id: one word, a column where a value was meant
			},
			benign: []string{"1", "2", "7", "42", "007", "0", "99999"},
		},
		{slot: "sort", // ORDER BY …
			attacks: []string{
				`(CASE WHEN (SELECT substr(password,1,1) FROM secrets)='h' THEN name ELSE city END)`,
				`name, (SELECT password FROM secrets)`,
				`name LIMIT 1`,
				`id DESC LIMIT 1 OFFSET 1`,
				`(SELECT 1)`,
				`randomblob(3)`,
				`name; DROP TABLE users`,
				`id; UPDATE users SET city = 'x'`,
				`-id`,
			},
			benign: []string{"name", "city DESC", "name DESC, id", "users.name", "id", "city, name", "NAME asc"},
		},
	}},
	{sink: "shell", res: "greet", slots: []slotCorpus{
		{slot: "name", // printf … "NAME"
			attacks: []string{
				`"; id; "`,
				`$(id)`,
				"`id`",
				`"| cat /etc/passwd; "`,
				`" && id && "`,
				"\"\nid\n\"",
				`$(cat /etc/passwd)`,
				"`cat /etc/passwd`",
				`$(echo pwned > pwned)`,
				`"; echo pwned > pwned; "`,
				`$HOME`,
				`${HOME}`,
				`; id`,              // inside "…": text
				`| cat /etc/passwd`, // likewise
				`&& id`,             // likewise
			},
			benign: []string{"Ada", "O'Brien", "D'Angelo", "Zoë", "José María", "Anne-Marie", "Tom & Jerry",
				"Smith; Jones", "a | b", "50% off", "Dr. Who?", "<b>bold</b>", "ada@example.com", "#1 fan",
				"it's 5 o'clock",
				"Ke$ha"}, // $ha expands inside "…": the handler prints "Ke"
		},
		{slot: "city", // printf … CITY (no quotes)
			attacks: []string{
				`; id`,
				`$(id)`,
				"`id`",
				`| cat /etc/passwd`,
				`&& id`,
				"\nid",
				`Paris;id`,
				`$(cat /etc/passwd)`,
				`; echo pwned > pwned`,
				`> pwned`,
				`/etc/pass*`,
				`~`,
				`$HOME`,
				`|| id`, // printf succeeds: || never runs
			},
			benign: []string{"London", "Zürich", "Aix-en-Provence", "St.Gallen", "10115", "Köln", "北京", "New-York",
				"New York", "L'Aquila"}, // a blank or a quote with no quotes around: the handler fails on these
		},
	}},
	{sink: "file", res: "files", slots: []slotCorpus{
		{slot: "name", // filepath.Join(base, name)
			attacks: []string{
				`../secret.txt`,
				`./../secret.txt`,
				`../../../../../../../../etc/passwd`,
				`../../../../../../../../etc/hostname`,
				`2024/../../secret.txt`,
				`sub/../../secret.txt`,
				`../files/../secret.txt`,
				`.env`,
				`.ssh/id_rsa`,
				`.ssh/../.env`,
				`..%2fsecret.txt`, // literal %2f: the handler does not decode it
				`..%2f..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd`, // likewise
				`....//....//secret.txt`,                          // a filter's bypass: here a folder named ....
				"notes.txt\x00.pdf",                               // Go refuses a NUL in a file name
				`/etc/passwd`,                                     // joined: {base}/etc/passwd
				`..\secret.txt`,                                   // a Windows separator: a name on Linux
			},
			benign: []string{"report.v2.pdf", "notes.txt", "notes..txt", "..hidden", "2024/q1.summary.csv",
				"my file (1).txt", "résumé.pdf", "archive.tar.gz", "a/../notes.txt", "./notes.txt"},
		},
		{slot: "path", // the path as given
			attacks: []string{
				`/etc/passwd`,
				`/etc/hostname`,
				`/proc/version`,
				`{base}/../secret.txt`,
				`{base}/2024/../../secret.txt`,
				`{base}/.env`,
				`{base}/.ssh/id_rsa`,
				`../secret.txt`, // relative to the process's folder: nothing there
			},
			benign: []string{"{base}/report.v2.pdf", "{base}/notes..txt", "{base}/2024/q1.summary.csv",
				"{base}/..hidden", "{base}/my file (1).txt", "{base}/2024/../notes.txt"},
		},
	}},
	{sink: "http", res: "fetch", slots: []slotCorpus{
		{slot: "url", // GET url
			attacks: []string{
				`http://127.0.0.1:{port}/`,
				`http://localhost:{port}/admin`,
				`http://LOCALHOST:{port}/admin`,
				`http://[::1]:{port}/`,
				`http://[::ffff:127.0.0.1]:{port}/`,
				`http://0.0.0.0:{port}/`,
				`http://[::]:{port}/`,
				`http://internal.attacker.example:{port}/`, // resolves to 127.0.0.1
				`http://api.partner.example@127.0.0.1:{port}/`,
				`http://redirect.example.com/go`, // a public host that redirects to 127.0.0.1
				`http://169.254.169.254/latest/meta-data/iam/security-credentials/`,
				`http://metadata.google.internal/computeMetadata/v1/`,
				`http://[fd00:ec2::254]/latest/meta-data/`,
				`http://100.100.100.200/latest/meta-data/`,
				`http://10.0.0.5/admin`,
				`http://192.168.1.1/`,
				`http://wiki.corp.example/`, // resolves to 192.168.10.10
				`http://2130706433:{port}/`, // 127.0.0.1 to inet_aton; a name to Go
				`http://0x7f.1:{port}/`,     // likewise
				`http://0177.0.0.1:{port}/`, // likewise
				`http://127.1:{port}/`,      // likewise
			},
			benign: []string{"http://api.partner.example/status", "http://cdn.example.org/assets/app.json",
				"http://[2001:db8::10]/status", "http://v6.example.net/status", "http://inventory.internal.example/status",
				"http://203.0.113.5:8080/health", "http://api.partner.example/status?next=http://localhost/",
				"HTTP://API.PARTNER.EXAMPLE/status"},
		},
		{slot: "host", // GET http://HOST/status
			attacks: []string{
				`127.0.0.1:{port}`,
				`localhost:{port}`,
				`[::1]:{port}`,
				`0.0.0.0:{port}`,
				`internal.attacker.example:{port}`,
				`api.partner.example@127.0.0.1:{port}`,
				`169.254.169.254`,
				`metadata.google.internal`,
				`10.0.0.5`,
				`wiki.corp.example`,
			},
			benign: []string{"api.partner.example", "cdn.example.org", "[2001:db8::10]", "v6.example.net",
				"inventory.internal.example", "198.51.100.7:8080"},
		},
	}},
}

// inert are the attacks that do nothing to this handler in any location
// that carries them, and why: the control run must agree, value by value.
var inert = map[[3]string]string{
	{"users", "name", `' OR '1'='1`}:                                     "a single quote inside the name's double quotes is text",
	{"users", "name", `'; DROP TABLE users; --`}:                         "likewise",
	{"greet", "name", `; id`}:                                            "inside double quotes, ; is text",
	{"greet", "name", `| cat /etc/passwd`}:                               "likewise |",
	{"greet", "name", `&& id`}:                                           "likewise &&",
	{"files", "name", `..%2fsecret.txt`}:                                 "the handler does not decode %2f: a file of that name, which does not exist",
	{"files", "name", `..%2f..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd`}: "likewise",
	{"files", "name", `....//....//secret.txt`}:                          "a folder named ...., which does not exist",
	{"files", "name", "notes.txt\x00.pdf"}:                               "Go refuses a NUL byte in a file name (invalid argument)",
	{"files", "name", `/etc/passwd`}:                                     "filepath.Join keeps it below the folder: {base}/etc/passwd, which does not exist",
	{"files", "name", `..\secret.txt`}:                                   "a backslash is no separator on Linux",
	{"files", "path", `../secret.txt`}:                                   "relative to the process's folder, where there is no such file",
	{"fetch", "url", `http://2130706433:{port}/`}:                        "Go reads the host as a name, not as 127.0.0.1 (as inet_aton, curl or a browser would), and no resolver knows it",
	{"fetch", "url", `http://0x7f.1:{port}/`}:                            "likewise",
	{"fetch", "url", `http://0177.0.0.1:{port}/`}:                        "likewise",
	{"fetch", "url", `http://127.1:{port}/`}:                             "likewise",
}

// failing are the benign values the handler cannot serve, with or without
// protection, and why: the control run must agree, value by value.
var failing = map[[3]string]string{
	{"users", "city", "L'Aquila"}:                  "a quote in '…': SQLite reports a syntax error",
	{"users", "city", "Côte d'Ivoire"}:             "likewise",
	{"users", "name", `Dwayne "The Rock" Johnson`}: "%q writes \\\", which SQLite does not read as an escape: a syntax error",
	{"greet", "name", "Ke$ha"}:                     "$ha expands inside double quotes: the handler prints Ke",
	{"greet", "city", "New York"}:                  "a blank with no quotes around it: two arguments, two greetings",
	{"greet", "city", "L'Aquila"}:                  "a quote with no quotes around it: the shell reports an unterminated string",
}

// knownMisses are effective attacks sink protection lets through, each with
// the reason; the test fails if one is blocked (then take it out) or if
// another attack gets through.
var knownMisses = map[[3]string]string{
	{"users", "name", "a\t\" OR 1=1 --"}: "the handler transformed the input before splicing it (Go's %q writes the tab as \\t), so the input is not in the query as sent (docs: What it cannot see)",
	{"users", "id", "id"}:                "one word, a column where a value was meant (WHERE id = id): one token, like a value (TestCheckSQL_KnownLimits)",
}
