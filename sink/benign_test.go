package sink

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractguard/contractguard/internal/taint"
)

// Inputs a web backend writes into commands, by what they are.
var (
	inNames  = []string{"O'Brien", "Zoë Saldaña", "d'Artagnan", "Mary-Jane Watson", "李小龙", "Ørsted", "bob", "alice_smith"}
	inEmails = []string{"user@example.com", "o'brien+news@example.co.uk", "first.last@sub.example.org"}
	inFiles  = []string{"report.v2.pdf", "photo.jpg", "my photo (1).png", "résumé.docx", "archive_2024-01.tar.gz", "uploads/2024/05/cat.png", "IMG_0001.JPG", "notes.txt"}
	inProse  = []string{"it's a fine day!", "Hello, world. How are you?", "50% off — today only", "semi; colons & pipes | are text", "don't stop me now", "price: $5 (approx.)", "a \"quoted\" word", "日本語のテキスト", "emoji 🎉 party", "naïve café", "line one\nline two", "back\\slash", "* stars *", "~tilde", "100% sure? yes!", "`backticks` are text", "$(not a command)"}
	inNums   = []string{"42", "3.14", "-90", "100x100", "1e6", "0755", "2024-05-01", "12:30:00", "+44 20 7946 0958"}
	inURLs   = []string{"https://github.com/user/repo.git", "git@github.com:user/repo.git", "https://example.com/a/b?c=d&e=f", "https://example.com/video.mp4"}
	inRefs   = []string{"main", "feature/login-page", "v1.2.3", "release-2024.05", "fix/o'brien-typo"}
	inWords  = []string{"hello", "ERROR", "warning", "user", "a.b*c", "foo bar", "[abc]", "^start", "end$"}
)

type benignTmpl struct {
	how  string
	argv func(in string) []string
	ins  [][]string
}

func argvOf(args ...string) func(string) []string {
	return func(in string) []string {
		out := make([]string, len(args))
		for i, s := range args {
			if s == "IN" {
				s = in
			}
			out[i] = s
		}
		return out
	}
}

func withParam(shell, script string) func(string) []string {
	return func(in string) []string { return []string{shell, "-c", script, shell, in} }
}

func spliced(shell, tmpl string) func(string) []string {
	return func(in string) []string { return []string{shell, "-c", fmt.Sprintf(tmpl, in)} }
}

var inAll = [][]string{inNames, inEmails, inFiles, inProse, inNums, inURLs, inRefs, inWords}

var benignTmpls = []benignTmpl{
	{"git clone", argvOf("git", "clone", "--depth", "1", "IN", "/tmp/repo"), [][]string{inURLs}},
	{"git clone --", argvOf("git", "clone", "--", "IN", "/tmp/repo"), [][]string{inURLs}},
	{"git checkout", argvOf("git", "-C", "/srv/repo", "checkout", "IN"), [][]string{inRefs}},
	{"git log --author", argvOf("git", "log", "--author", "IN", "--format=%H"), [][]string{inNames, inEmails}},
	{"git log --author=", argvOf("git", "log", "--author=IN"), [][]string{inNames, inEmails}},
	{"git commit -m", argvOf("git", "commit", "-m", "IN"), [][]string{inProse, inNames}},
	{"git config user.name", argvOf("git", "config", "user.name", "IN"), [][]string{inNames}},
	{"git show", argvOf("git", "show", "IN:README.md"), [][]string{inRefs}},
	{"convert", argvOf("convert", "IN", "-resize", "100x100", "/tmp/out.png"), [][]string{inFiles}},
	{"convert size", argvOf("convert", "in.png", "-resize", "IN", "/tmp/out.png"), [][]string{{"100x100", "50%", "640x480>", "800x"}}},
	{"convert label", argvOf("convert", "-size", "200x50", "label:IN", "/tmp/out.png"), [][]string{inNames, inProse}},
	{"ffmpeg", argvOf("ffmpeg", "-i", "IN", "-f", "mp4", "/tmp/out.mp4"), [][]string{inFiles, inURLs}},
	{"ffmpeg -ss", argvOf("ffmpeg", "-ss", "IN", "-i", "in.mp4", "-frames:v", "1", "/tmp/t.jpg"), [][]string{{"00:00:05", "12.5", "01:02:03.250"}}},
	{"ffmpeg title", argvOf("ffmpeg", "-i", "in.mp4", "-metadata", "title=IN", "/tmp/out.mp4"), [][]string{inProse, inNames}},
	{"tar -xzf", argvOf("tar", "-xzf", "IN", "-C", "/tmp/dir"), [][]string{inFiles}},
	{"tar -czf", argvOf("tar", "-czf", "/tmp/out.tar.gz", "-C", "/srv", "--", "IN"), [][]string{inFiles}},
	{"unzip", argvOf("unzip", "-o", "IN", "-d", "/tmp/dir"), [][]string{inFiles}},
	{"zip", argvOf("zip", "-r", "/tmp/out.zip", "IN"), [][]string{inFiles}},
	{"pdftotext", argvOf("pdftotext", "-layout", "IN", "-"), [][]string{inFiles}},
	{"pandoc", argvOf("pandoc", "-f", "markdown", "-t", "html", "-o", "/tmp/out.html", "IN"), [][]string{inFiles}},
	{"pandoc title", argvOf("pandoc", "--metadata", "title=IN", "in.md"), [][]string{inProse}},
	{"wkhtmltopdf", argvOf("wkhtmltopdf", "IN", "/tmp/out.pdf"), [][]string{inURLs}},
	{"curl", argvOf("curl", "-sS", "--max-time", "5", "-o", "/tmp/out", "IN"), [][]string{inURLs}},
	{"curl -H", argvOf("curl", "-H", "X-User: IN", "https://api.example.com"), [][]string{inNames, inEmails}},
	{"curl -d", argvOf("curl", "-d", "IN", "https://api.example.com"), [][]string{inProse}},
	{"wget", argvOf("wget", "-q", "-O", "/tmp/out", "IN"), [][]string{inURLs}},
	{"grep", argvOf("grep", "-r", "-n", "-e", "IN", "/srv/logs"), [][]string{inWords, inProse}},
	{"grep --", argvOf("grep", "-F", "--", "IN", "/srv/log"), inAll},
	{"grep -i", argvOf("grep", "-i", "IN", "/srv/log"), [][]string{inWords, inNames, inEmails}},
	{"rg", argvOf("rg", "--fixed-strings", "IN", "/srv"), [][]string{inWords, inNames}},
	{"sort", argvOf("sort", "-o", "/tmp/out", "IN"), [][]string{inFiles}},
	{"find -name", argvOf("find", "/srv/uploads", "-name", "IN", "-type", "f"), [][]string{inFiles, {"*.png", "report*"}}},
	{"ls", argvOf("ls", "-la", "IN"), [][]string{inFiles}},
	{"cp", argvOf("cp", "--", "IN", "/tmp/backup/"), [][]string{inFiles}},
	{"mv", argvOf("mv", "/tmp/upload.tmp", "/srv/files/IN"), [][]string{inFiles}},
	{"mkdir", argvOf("mkdir", "-p", "/srv/users/IN"), [][]string{{"bob", "alice_smith", "o'brien", "user-42"}}},
	{"rm", argvOf("rm", "-f", "/srv/tmp/IN"), [][]string{inFiles}},
	{"sha256sum", argvOf("sha256sum", "IN"), [][]string{inFiles}},
	{"file", argvOf("file", "--mime-type", "-b", "IN"), [][]string{inFiles}},
	{"identify", argvOf("identify", "-format", "%w %h", "IN"), [][]string{inFiles}},
	{"exiftool", argvOf("exiftool", "-json", "IN"), [][]string{inFiles}},
	{"gs", argvOf("gs", "-dBATCH", "-dNOPAUSE", "-sDEVICE=png16m", "-sOutputFile=/tmp/p%d.png", "IN"), [][]string{inFiles}},
	{"libreoffice", argvOf("soffice", "--headless", "--convert-to", "pdf", "--outdir", "/tmp", "IN"), [][]string{inFiles}},
	{"jq", argvOf("jq", "-r", "--arg", "name", "IN", ".[] | select(.name == $name)", "/srv/data.json"), inAll},
	{"jq path", argvOf("jq", ".IN", "/srv/data.json"), [][]string{{"name", "user_id", "items"}}},
	{"psql", argvOf("psql", "-d", "app", "-v", "name=IN", "-f", "/srv/q.sql"), [][]string{inNames}},
	{"sqlite3", argvOf("sqlite3", "/srv/app.db", ".dump IN"), [][]string{{"users", "orders"}}},
	{"openssl", argvOf("openssl", "x509", "-in", "IN", "-noout", "-subject"), [][]string{{"cert.pem", "/srv/certs/site.crt"}}},
	{"openssl subj", argvOf("openssl", "req", "-new", "-subj", "/CN=IN", "-key", "k.pem"), [][]string{{"example.com", "www.example.org"}, inNames}},
	{"gpg", argvOf("gpg", "--batch", "--recipient", "IN", "--encrypt", "f"), [][]string{inEmails}},
	{"ssh-keygen", argvOf("ssh-keygen", "-t", "ed25519", "-C", "IN", "-f", "/tmp/k", "-N", ""), [][]string{inEmails, inNames}},
	{"htpasswd", argvOf("htpasswd", "-b", "/srv/.htpasswd", "IN", "s3cret"), [][]string{{"bob", "alice_smith"}}},
	{"useradd", argvOf("useradd", "-m", "-c", "IN", "bob"), [][]string{inNames}},
	{"python", argvOf("python3", "/srv/scripts/report.py", "--user", "IN"), [][]string{inNames, inEmails}},
	{"python --", argvOf("python3", "/srv/scripts/report.py", "--", "IN"), inAll},
	{"node", argvOf("node", "/srv/render.js", "IN"), [][]string{inFiles, inURLs}},
	{"echo", argvOf("echo", "IN"), [][]string{inNames, inEmails, inProse, inURLs}},
	{"printf", argvOf("printf", "%s\n", "IN"), inAll},
	{"date", argvOf("date", "-d", "IN", "+%s"), [][]string{{"2024-05-01", "yesterday", "2024-05-01 12:30:00"}}},
	{"whois", argvOf("whois", "IN"), [][]string{{"example.com", "example.org"}}},
	{"dig", argvOf("dig", "+short", "IN", "MX"), [][]string{{"example.com", "mail.example.org"}}},
	{"ping", argvOf("ping", "-c", "1", "-W", "2", "IN"), [][]string{{"example.com", "192.0.2.1", "2001:db8::1"}}},
	{"nslookup", argvOf("nslookup", "IN"), [][]string{{"example.com"}}},
	{"aws s3 cp", argvOf("aws", "s3", "cp", "s3://bucket/IN", "/tmp/out"), [][]string{inFiles}},
	{"kubectl", argvOf("kubectl", "get", "pods", "-n", "IN", "-o", "json"), [][]string{{"default", "team-a", "prod"}}},
	{"docker", argvOf("docker", "run", "--rm", "--name", "job-IN", "alpine:3", "echo", "ok"), [][]string{{"42", "abc123def"}}},
	{"docker logs", argvOf("docker", "logs", "--tail", "IN", "web"), [][]string{{"100", "50"}}},
	{"systemctl", argvOf("systemctl", "status", "IN.service"), [][]string{{"nginx", "app-worker"}}},
	{"lp", argvOf("lp", "-d", "office", "-t", "IN", "/tmp/doc.pdf"), [][]string{inProse, inNames}},
	{"mail", argvOf("mail", "-s", "IN", "admin@example.com"), [][]string{inProse}},
	{"sendmail", argvOf("sendmail", "-f", "noreply@example.com", "--", "IN"), [][]string{inEmails}},
	// Wrappers.
	{"timeout convert", argvOf("timeout", "5", "convert", "IN", "/tmp/out.png"), [][]string{inFiles}},
	{"timeout -k", argvOf("timeout", "-k", "2", "30s", "ffmpeg", "-i", "IN", "/tmp/out.mp4"), [][]string{inFiles, inURLs}},
	{"sudo -u git", argvOf("sudo", "-u", "app", "git", "-C", "IN", "pull"), [][]string{{"/srv/repos/site", "/srv/repos/o'brien"}}},
	{"sudo -u IN", argvOf("sudo", "-n", "-u", "IN", "id"), [][]string{{"bob", "alice_smith"}}},
	{"sudo -- grep", argvOf("sudo", "--", "grep", "-F", "--", "IN", "/var/log/syslog"), inAll},
	{"env LANG=C sort", argvOf("env", "LANG=C", "sort", "IN"), [][]string{inFiles}},
	{"env NAME=IN", argvOf("env", "USER_NAME=IN", "/srv/bin/greet"), [][]string{inNames, inProse}},
	{"nice", argvOf("nice", "-n", "10", "gzip", "-9", "--", "IN"), [][]string{inFiles}},
	{"ionice", argvOf("ionice", "-c", "3", "tar", "-czf", "/tmp/b.tgz", "IN"), [][]string{inFiles}},
	{"nohup", argvOf("nohup", "/srv/bin/worker", "--job", "IN"), [][]string{{"42", "job-abc"}}},
	{"stdbuf", argvOf("stdbuf", "-oL", "grep", "-F", "IN", "/srv/log"), [][]string{inWords, inNames}},
	{"flock", argvOf("flock", "-w", "10", "/tmp/app.lock", "rsync", "-a", "IN", "/backup/"), [][]string{inFiles}},
	{"xargs", argvOf("xargs", "-0", "grep", "-F", "IN"), [][]string{inWords, inNames}},
	{"runuser", argvOf("runuser", "-u", "app", "--", "convert", "IN", "/tmp/out.png"), [][]string{inFiles}},
	{"doas", argvOf("doas", "-u", "app", "ls", "IN"), [][]string{inFiles}},
	{"time", argvOf("time", "sha256sum", "IN"), [][]string{inFiles}},
	{"chrt", argvOf("chrt", "-i", "0", "convert", "IN", "/tmp/o.png"), [][]string{inFiles}},
	{"taskset", argvOf("taskset", "-c", "0", "ffmpeg", "-i", "IN", "/tmp/o.mp4"), [][]string{inFiles}},
	{"env -i", argvOf("env", "-i", "PATH=/usr/bin:/bin", "HOME=/tmp", "convert", "IN", "/tmp/o.png"), [][]string{inFiles}},
	{"timeout sudo env", argvOf("timeout", "60", "sudo", "-u", "app", "env", "LANG=C", "wc", "-l", "IN"), [][]string{inFiles}},
	// ssh with a fixed remote command and the input quoted.
	{"ssh ls", func(in string) []string { return []string{"ssh", "deploy@host.example.com", "ls -l " + sq(in)} }, [][]string{inFiles, inNames}},
	{"ssh grep", func(in string) []string {
		return []string{"ssh", "-p", "2222", "-i", "/srv/key", "host", "grep", "-F", "--", sq(in), "/var/log/app.log"}
	}, inAll},
	{"ssh IN host", argvOf("ssh", "-o", "BatchMode=yes", "IN", "uptime"), [][]string{{"host.example.com", "deploy@10.0.0.5", "web-01"}}},
	{"scp", argvOf("scp", "-P", "22", "/tmp/out.tar", "deploy@host:/srv/IN"), [][]string{inFiles}},
	// sh -c with the input as a parameter.
	{`sh grep "$1"`, withParam("sh", `grep -F -- "$1" /srv/log`), inAll},
	{`sh printf|sort`, withParam("bash", `printf '%s\n' "$1" | sort`), inAll},
	{`sh echo "$1" | tr`, withParam("sh", `printf '%s\n' "$1" | tr -d '\r'`), inAll},
	{`sh convert "$1"`, withParam("sh", `convert "$1" -resize 100x100 /tmp/out.png && echo done`), inAll},
	{`sh cd; git clone "$1"`, withParam("sh", `set -e; cd /tmp && git clone --depth 1 -- "$1" repo`), [][]string{inURLs}},
	{`sh for`, withParam("sh", `for f in "$@"; do echo "$f"; done`), inAll},
	{`sh if`, withParam("sh", `if [ -f "$1" ]; then cat -- "$1"; else echo missing; fi`), inAll},
	{`sh heredoc`, withParam("sh", "cat <<'EOF' > /tmp/job.conf\n[job]\nname = fixed\nEOF\necho \"$1\" >> /tmp/job.conf"), inAll},
	{`sh heredoc $1`, withParam("sh", "cat <<EOF\nDear $1,\nyour report is ready.\nEOF"), inAll},
	{`bash [[`, withParam("bash", `[[ -n "$1" ]] && printf '%s' "$1" | wc -c`), inAll},
	{`bash -s xargs`, withParam("bash", `printf '%s\0' "$1" | xargs -0 -n1 echo`), inAll},
	{`sh timeout`, withParam("sh", `timeout 5 convert "$1" /tmp/o.png`), [][]string{inFiles}},
	{`sh ssh`, withParam("sh", `ssh host "ls -l $(printf %q "$1")"`), [][]string{inFiles}},
	{`sh env`, withParam("sh", `env LANG=C sort -- "$1"`), [][]string{inFiles}},
	{`sh export`, withParam("sh", `export USER_NAME="$1"; /srv/bin/greet`), inAll},
	{`sh case`, withParam("sh", `case "$1" in *.png) echo image;; *) echo other;; esac`), inAll},
	{`sh pipe into sh -c`, withParam("sh", `echo "$1" | sh -c 'cat > /tmp/out'`), inAll},
	// sh -c with the input spliced as a quoted word (the application
	// quotes: single quotes for inputs without one).
	{"sh 'IN'", spliced("sh", "ls -l -- '%s'"), [][]string{{"report.v2.pdf", "my photo (1).png", "résumé.docx", "Zoë Saldaña", "50% off — today only", "semi; colons & pipes | are text", "$(not a command)", "`backticks` are text", "* stars *", "price: $5 (approx.)"}}},
	{"sh 'IN' pipe", spliced("sh", "printf '%%s\\n' '%s' | sort | uniq -c"), [][]string{{"hello", "foo bar", "Zoë Saldaña", "日本語のテキスト", "semi; colons & pipes | are text"}}},
	{"sh convert 'IN'", spliced("sh", "convert '%s' -resize 100x100 /tmp/out.png"), [][]string{inFiles}},
	{`sh "IN"`, spliced("sh", `echo "%s"`), [][]string{{"O'Brien", "it's a fine day!", "don't stop me now", "Hello, world. How are you?", "d'Artagnan", "50% off — today only"}}},
	{"sh IN bare", spliced("sh", "convert %s -resize 100x100 /tmp/out.png"), [][]string{{"report.v2.pdf", "photo.jpg", "uploads/2024/05/cat.png", "IMG_0001.JPG", "archive_2024-01.tar.gz"}}},
	{"sh IN number", spliced("sh", "head -n %s /srv/log | tail -n 5"), [][]string{{"42", "100", "2024"}}},
	{"sh git checkout", spliced("sh", "cd /srv/repo && git fetch && git checkout '%s'"), [][]string{inRefs[:4]}},
	{"sh -c timeout 'IN'", spliced("sh", "timeout 5 convert '%s' /tmp/o.png"), [][]string{inFiles}},
	{"sh -c sudo 'IN'", spliced("bash", "sudo -u app git -C /srv/repo log --author='%s'"), [][]string{{"Zoë Saldaña", "bob", "user@example.com"}}},
	{"sh -c heredoc 'IN'", spliced("sh", "cat > /tmp/msg <<'EOF'\nGreetings,\nEOF\necho '%s' >> /tmp/msg"), [][]string{{"Zoë Saldaña", "hello", "semi; colons & pipes | are text"}}},
	{"sh -c heredoc IN", spliced("sh", "cat <<'EOF'\nDear %s,\nthanks.\nEOF"), [][]string{{"bob", "Ørsted", "Zoë", "report.v2.pdf"}}},
	{"sh -c ssh 'IN'", spliced("sh", "ssh deploy@host \"ls -l '%s'\""), [][]string{inFiles}},
	{"sh -c sh -c", spliced("sh", "sh -c 'echo \"%s\"'"), [][]string{{"hello", "foo bar", "Zoë Saldaña"}}},
	{"sh -c su -c", spliced("sh", "su app -c 'convert \"%s\" /tmp/o.png'"), [][]string{inFiles}},
	{"sh -c watch", spliced("sh", "watch -n 5 \"ls -l '%s'\""), [][]string{inFiles}},
	{"sh -c env sh", spliced("sh", "env LANG=C sh -c 'grep -F -- \"%s\" /srv/log'"), [][]string{{"hello", "foo bar", "ERROR"}}},
	{"sh -c export", spliced("sh", "export GREETING='%s'; /srv/bin/greet"), [][]string{{"hello", "Zoë Saldaña", "foo bar"}}},
	{"sh -c NAME=IN prog", spliced("sh", "USER_NAME='%s' /srv/bin/greet"), [][]string{{"hello", "Zoë Saldaña", "foo bar"}}},
	{"bash -c $'…'", spliced("bash", "printf '%%s\\n' \"%s\" | wc -c"), [][]string{{"hello", "foo bar", "Zoë Saldaña", "it's a fine day!"}}},
	{"sh -c comment", spliced("sh", "echo ok # user: %s"), [][]string{inNames, inProse[:4]}},
	{"sh cd git pull", withParam("sh", `cd "$1" && git pull --ff-only`), [][]string{inFiles}},
	{"bash set -euo", withParam("bash", "set -euo pipefail\nsrc=\"$1\"\nconvert \"$src\" -strip /tmp/out.png"), inAll},
	{"sh find -exec", withParam("sh", `find /srv/uploads -name "$1" -exec rm -f {} \;`), inAll},
	{"sh awk -v", withParam("sh", `awk -v name="$1" '$1 == name {print $2}' /srv/users`), inAll},
	{"sh tar", withParam("sh", `tar -C /tmp -xzf "$1"`), [][]string{inFiles}},
	{"sudo sh -c", func(in string) []string {
		return []string{"sudo", "-u", "app", "--", "sh", "-c", `convert "$1" /tmp/o.png`, "sh", in}
	}, inAll},
	{"timeout bash -c", func(in string) []string {
		return []string{"timeout", "10s", "bash", "-c", `wc -c <<< "$1"`, "bash", in}
	}, inAll},
	{"env -i sh -c", func(in string) []string {
		return []string{"env", "-i", "PATH=/usr/bin:/bin", "sh", "-c", `printf '%s\n' "$1"`, "sh", in}
	}, inAll},
	{"ssh -- grep", func(in string) []string {
		return []string{"ssh", "host", "--", "grep -F -- " + sq(in) + " /var/log/app.log"}
	}, inAll},
	{"ssh cat", func(in string) []string {
		return []string{"ssh", "-o", "StrictHostKeyChecking=no", "host", "cat /srv/files/" + sq(in)}
	}, [][]string{inFiles}},
	{"git -c user.name", argvOf("git", "-c", "user.name=IN", "commit", "-m", "update"), [][]string{inNames}},
	{"git clone --branch", argvOf("git", "clone", "--branch", "IN", "https://example.com/r.git", "/tmp/r"), [][]string{inRefs}},
	{"kubectl exec sh", func(in string) []string {
		return []string{"kubectl", "exec", "web-0", "--", "sh", "-c", `echo "$1"`, "sh", in}
	}, inAll},
	{"runuser sh", func(in string) []string {
		return []string{"runuser", "-u", "app", "--", "sh", "-c", `ls -l -- "$1"`, "sh", in}
	}, inAll},
	{"watch tail", spliced("sh", "watch -n 1 \"tail -n 5 /var/log/'%s'\""), [][]string{inFiles}},
	{"watch argv", func(in string) []string { return []string{"watch", "-n", "1", "tail -n 5 " + sq(in)} }, [][]string{inFiles, inNames}},
	{"flock -c", func(in string) []string {
		return []string{"flock", "/tmp/l", "-c", "convert " + sq(in) + " /tmp/o.png"}
	}, [][]string{inFiles, inNames}},
	{"bash printf > file", spliced("bash", "printf '%%s\\n' '%s' > /tmp/out"), [][]string{{"hello", "Zoë Saldaña", "foo bar", "semi; colons & pipes | are text"}}},
	{"sh echo | mail", spliced("sh", "echo '%s' | mail -s 'Report' admin@example.com"), [][]string{{"hello", "foo bar", "Zoë Saldaña"}}},
	{"bash while read", withParam("bash", `while read -r l; do echo "$l"; done <<< "$1"`), inAll},
	{"sh exec convert", spliced("sh", "exec convert '%s' /tmp/o.png"), [][]string{inFiles}},
	{"sh export LANG", withParam("sh", `export LANG=C.UTF-8; sort -- "$1"`), [][]string{inFiles}},
	{"sh heredoc fixed then IN", spliced("sh", "cat <<EOF > /tmp/hdr\nfixed header\nEOF\nconvert '%s' /tmp/o.png"), [][]string{inFiles}},
	{"sudo sh -c dq", spliced("sh", "sudo -u app sh -c \"echo '%s'\""), [][]string{{"hello", "foo bar", "Zoë Saldaña", "a.png"}}},
	{"sh sleep", spliced("sh", "sleep %s && echo done"), [][]string{{"1", "42", "0.5"}}},
	{"curl --data-urlencode", argvOf("curl", "--data-urlencode", "q=IN", "https://api.example.com"), [][]string{inProse, inNames}},
	{"pwsh LiteralPath", func(in string) []string { return []string{"pwsh", "-c", "Get-Item -LiteralPath '" + in + "'"} }, [][]string{{"report.v2.pdf", "my photo (1).png", "Zoë Saldaña"}}},
	{"cmd /c type", func(in string) []string { return []string{"cmd", "/c", "type", in} }, [][]string{{"report.v2.pdf", "notes.txt"}}},
	{"sh xargs -0", withParam("sh", `printf '%s\0' "$@" | xargs -0 ls -l --`), inAll},
	{"sh nohup", withParam("sh", `nohup /srv/bin/worker --job "$1" >/dev/null 2>&1 &`), inAll},
	{"sh for files", spliced("sh", "for f in /srv/uploads/%s/*.png; do echo \"$f\"; done"), [][]string{{"user-42", "bob", "2024"}}},
	{"sh $(date)", spliced("sh", "mkdir -p \"/srv/out/$(date +%%F)/%s\""), [][]string{{"bob", "user-42", "alice_smith"}}},
	{"sh su -c", func(in string) []string { return []string{"su", "app", "-c", "convert " + sq(in) + " /tmp/o.png"} }, [][]string{inFiles, inNames}},
	{"cmd /c", func(in string) []string { return []string{"cmd", "/c", `type "` + in + `"`} }, [][]string{inFiles}},
	{"powershell", func(in string) []string { return []string{"powershell", "-Command", "Get-Item '" + in + "'"} }, [][]string{{"report.v2.pdf", "photo.jpg", "my photo (1).png"}}},
	// The programs whose options hold command lines, and the wrappers and
	// readers added with them, with input as their data.
	{"tar -czf IN", argvOf("tar", "-czf", "/tmp/out.tgz", "IN"), [][]string{inFiles}},
	{"tar czf IN", argvOf("tar", "czf", "/tmp/out.tgz", "-C", "/srv", "IN"), [][]string{inFiles}},
	{"tar --exclude=", argvOf("tar", "-czf", "/tmp/out.tgz", "--exclude=IN", "/srv/data"), [][]string{inFiles}},
	{"tar -I zstd", argvOf("tar", "-I", "zstd -19", "-cf", "/tmp/out.tar.zst", "IN"), [][]string{inFiles}},
	{"tar --to-command", argvOf("tar", "-xf", "/srv/a.tar", "--to-command=sha256sum", "IN"), [][]string{inFiles}},
	{"rsync -av", argvOf("rsync", "-av", "IN", "/backup/"), [][]string{inFiles}},
	{"rsync -e ssh", argvOf("rsync", "-az", "-e", "ssh -p 2222", "IN", "deploy@host:/srv/"), [][]string{inFiles}},
	{"rsync --exclude", argvOf("rsync", "-a", "--exclude", "IN", "/srv/src/", "/srv/dst/"), [][]string{inFiles}},
	{"zip -T", argvOf("zip", "-T", "-j", "/tmp/out.zip", "IN"), [][]string{inFiles}},
	{"zip -r", argvOf("zip", "-r", "/tmp/out.zip", "IN"), [][]string{inFiles}},
	{"man", argvOf("man", "-P", "cat", "IN"), [][]string{{"ls", "tar", "git-commit", "printf"}}},
	{"man -k", argvOf("man", "-k", "IN"), [][]string{inWords}},
	{"git tag -m", argvOf("git", "tag", "-a", "v1.0", "-m", "IN"), [][]string{inProse, inNames}},
	{"git commit --message=", argvOf("git", "commit", "--message=IN"), [][]string{inProse, inNames}},
	{"git log --grep", argvOf("git", "log", "--grep", "IN", "--oneline"), [][]string{inWords, inNames}},
	{"git push branch", argvOf("git", "push", "-u", "origin", "IN"), [][]string{inRefs}},
	{"git clone --upload-pack fixed", argvOf("git", "clone", "--upload-pack=git-upload-pack", "IN", "/tmp/r"), [][]string{inURLs}},
	{"scp", argvOf("scp", "-o", "BatchMode=yes", "IN", "deploy@host:/srv/"), [][]string{inFiles}},
	{"parallel :::", argvOf("parallel", "-j", "4", "convert", "{}", "{.}.png", ":::", "IN"), [][]string{inFiles}},
	{"parallel echo :::", argvOf("parallel", "echo", ":::", "IN", "b.txt"), inAll},
	{"find -iname", argvOf("find", "/srv/uploads", "-iname", "IN", "-type", "f", "-print"), [][]string{inFiles, {"*.PNG", "report*"}}},
	{"at -f", argvOf("at", "-f", "/srv/jobs/IN", "now + 1 minute"), [][]string{{"report.sh", "nightly-42.sh"}}},
	{"firejail", argvOf("firejail", "--quiet", "--net=none", "convert", "IN", "/tmp/o.png"), [][]string{inFiles}},
	{"bwrap", argvOf("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "convert", "IN", "/tmp/o.png"), [][]string{inFiles}},
	{"xvfb-run", argvOf("xvfb-run", "-a", "-s", "-screen 0 1024x768x24", "wkhtmltopdf", "IN", "/tmp/o.pdf"), [][]string{inURLs}},
	{"sg -c", func(in string) []string { return []string{"sg", "docker", "-c", "docker logs " + sq(in)} }, [][]string{{"web", "api-worker"}}},
	{"sh trap", withParam("sh", `trap 'rm -f /tmp/lock' EXIT; grep -F -- "$1" /srv/log`), inAll},
	{`bash "$@"`, withParam("bash", `for f in "$@"; do convert "$f" -strip "/tmp/$(basename "$f")"; done`), [][]string{inFiles}},
	{"bash eval fixed", withParam("bash", `eval "$(ssh-agent -s)" >/dev/null; printf '%s\n' "$1"`), inAll},
	{"bash function", withParam("bash", `function show { printf '%s\n' "$1"; }; show "$1"`), inAll},
	{"bash f() <<<", withParam("bash", `count() { wc -c; }; count <<< "$1"`), inAll},
	{"bash coproc", withParam("bash", `coproc W { cat; }; printf '%s\n' "$1" >&"${W[1]}"`), inAll},
	{"bash source file", withParam("bash", `. /srv/env.sh; grep -F -- "$1" /srv/log`), inAll},
	// Interpreters given the input as their code's arguments, awk's
	// variables and files, and the options that name a program or a
	// command line with the input elsewhere.
	{"python3 -c argv", argvOf("python3", "-c", "import sys; print(sys.argv[1])", "IN"), inAll},
	{"python3 -m", argvOf("python3", "-m", "json.tool", "IN"), [][]string{inFiles}},
	{"perl -le ARGV", argvOf("perl", "-le", "print $ARGV[0]", "--", "IN"), inAll},
	{"perl -pi -e", argvOf("perl", "-pi", "-e", "s/foo/bar/g", "IN"), [][]string{inFiles}},
	{"node -e argv", argvOf("node", "-e", "console.log(process.argv[1])", "--", "IN"), inAll},
	{"php -r argv", argvOf("php", "-r", "echo $argv[1];", "--", "IN"), inAll},
	{"Rscript -e args", argvOf("Rscript", "-e", "cat(commandArgs(TRUE))", "IN"), [][]string{inFiles, inNames}},
	{"awk ARGV", argvOf("awk", "--", "BEGIN { print ARGV[1] }", "IN"), inAll},
	{"awk -v", argvOf("awk", "-F:", "-v", "name=IN", "$1 == name { print $7 }", "/etc/passwd"), [][]string{inNames, inEmails}},
	{"awk file", argvOf("awk", "-F,", "{ print $2 }", "IN"), [][]string{inFiles}},
	{"gawk -f file", argvOf("gawk", "-f", "/srv/report.awk", "IN"), [][]string{inFiles}},
	{"sh python3 -c $1", withParam("sh", `python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"`), inAll},
	{"sh awk 'IN'", spliced("sh", "awk -F: '{ print $1 }' '%s'"), [][]string{inFiles}},
	{"sh perl -pi 'IN'", spliced("sh", "perl -pi -e 's/foo/bar/' '%s'"), [][]string{inFiles}},
	{"sh 'IN' | python3 script", spliced("sh", "printf '%%s\n' '%s' | python3 /srv/scripts/clean.py"), [][]string{{"hello", "foo bar", "Zoë Saldaña", "semi; colons & pipes | are text"}}},
	{"sh 'IN' | perl -ne", spliced("sh", "printf '%%s\n' '%s' | perl -ne 'print uc'"), [][]string{{"hello", "foo bar", "Zoë Saldaña"}}},
	{"su -s", argvOf("su", "-s", "/bin/sh", "-c", "/srv/bin/job", "IN"), [][]string{{"bob", "alice_smith"}}},
	{"runuser -s", argvOf("runuser", "-s", "/bin/bash", "-u", "app", "--", "convert", "IN", "/tmp/o.png"), [][]string{inFiles}},
	{"sort --compress-program", argvOf("sort", "--compress-program=gzip", "-T", "/tmp", "-o", "/tmp/out", "IN"), [][]string{inFiles}},
	{"split --filter", argvOf("split", "-l", "1000", "--filter=gzip > $FILE.gz", "IN", "/tmp/part-"), [][]string{inFiles}},
	{"strace -o", argvOf("strace", "-f", "-o", "/tmp/trace.log", "convert", "IN", "/tmp/o.png"), [][]string{inFiles}},
	{"strace -o |", argvOf("strace", "-o", "|gzip -c > /tmp/t.gz", "convert", "IN", "/tmp/o.png"), [][]string{inFiles}},
}

// runBenign: the corpus's commands run through the real shell, where the
// programs they call are there and need no files; true for those that
// print the input.
var runBenign = map[string]bool{
	`sh printf|sort`: true, `sh echo "$1" | tr`: true, `sh for`: true, `sh heredoc $1`: true, `bash -s xargs`: true,
	`bash while read`: true, "env -i sh -c": true, "printf": true, "echo": true, `sh "IN"`: true, "sh 'IN' pipe": true,
	"sh -c sh -c": true, "bash $'…'": false, "sh -c heredoc IN": true, "sh -c comment": false, `sh if`: false,
	`bash [[`: false, `sh case`: false, "timeout bash -c": false, "awk ARGV": true,
}

// TestCheckCmd_BenignCorpus: commands a web backend runs with request
// input where it is data — an operand, an option's value, a parameter of
// a script ("$1"), a quoted word of one, behind wrappers, in nested
// scripts and ssh's remote command — each with inputs of the kind it
// takes (names with apostrophes, e-mail addresses, file names, prose,
// unicode, numbers, URLs, refs), from every location: none is blocked.
// Those whose programs are there run through the real shell, and print
// the input.
func TestCheckCmd_BenignCorpus(t *testing.T) {
	n := 0
	for _, tm := range benignTmpls {
		for _, set := range tm.ins {
			for _, in := range set {
				argv := tm.argv(in)
				n++
				for _, src := range sources {
					if !carries(src, in) {
						continue
					}
					r, rc := inputAt(t, src, in)
					require.NoError(t, CheckCmd(ctxOf(r), cmdOf(argv...)), "%s %v %q", tm.how, src, argv)
					assert.Empty(t, rc.all())
				}
				prints, ok := runBenign[tm.how]
				if !ok {
					continue
				}
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Stdin = strings.NewReader("")
				out, err := cmd.Output()
				require.NoError(t, err, "%q", argv)
				if prints {
					assert.Contains(t, string(out), strings.TrimSpace(in), "%q", argv)
				}
			}
		}
	}
	t.Logf("%d benign commands of %d kinds", n, len(benignTmpls))
}

// The corpus's known false positives: input the check cannot tell from an
// attack where it lands, blocked (docs/sink-protection.md, "Known false
// positives").
func TestCheckCmd_BenignCorpusKnownBlocked(t *testing.T) {
	for _, c := range []struct {
		in   string
		argv []string
	}{
		// An argument that starts with "-": the check does not know which
		// options take a value, nor what a script does with "$1".
		{"-- dashes --", []string{"git", "commit", "-m", "-- dashes --"}},
		{"-- dashes --", []string{"sh", "-c", `grep -F -- "$1" /srv/log`, "sh", "-- dashes --"}},
		// A here-document's body is also read as code: a blank, a quote
		// or a line's first word there is blocked, its delimiter quoted or
		// not.
		{"O'Brien", []string{"sh", "-c", "cat <<'EOF'\nDear O'Brien,\nEOF"}},
		{"hello", []string{"sh", "-c", "cat <<EOF\nHello $1,\nEOF", "sh", "hello"}},
		// A script that pipes into a shell, or feeds one a here-document:
		// any input in it.
		{"hello", []string{"sh", "-c", "grep -c 'hello' /srv/log; curl -fsSL https://example.com/i.sh | bash"}},
		{"a.png", []string{"sh", "-c", "ssh host sh <<'EOF'\nuptime\nEOF\necho 'a.png'"}},
		// An input that is the program's name, by chance.
		{"timeout", []string{"timeout", "10s", "bash", "-c", `wc -c <<< "$1"`, "bash", "timeout"}},
		// An input right after an unquoted expansion in the program's
		// place: the expansion may be empty.
		{"photo.jpg", []string{"sh", "-c", "$VIEWER photo.jpg"}},
	} {
		r, rc := inputAt(t, taint.Query, c.in)
		assertBlocked(t, CheckCmd(ctxOf(r), cmdOf(c.argv...)), rc, taint.Query, c.in, "shell")
	}
}
