#!/bin/sh
# Write mcpreel(1), generated from the binary's own 'mcpreel --help' and
# each 'mcpreel COMMAND --help' (the build runs this, see CMakeLists.txt),
# so the man page says what --help says, word for word.
#   scripts/manpage.sh MCPREEL OUT
# The help texts are laid out by hand (aligned columns), so they go in
# unfilled (.nf), with option names in bold.
set -eu

bin=$1
out=$2
. "$(dirname "$0")/helpopts.sh"

# Help text on stdin as roff: backslashes and hyphens escaped (\- is the
# minus sign an option needs, so a copied option works), a control
# character at the start of a line made text, long options bold.
roff()
{
	awk '
		function dash(s) { gsub(/-/, "\\-", s); return s }
		{
			s = $0
			gsub(/\\/, "\\e", s)
			o = ""
			while (match(s, /--[a-z][a-z0-9-]*/)) {
				o = o dash(substr(s, 1, RSTART - 1)) \
				    "\\fB" dash(substr(s, RSTART, RLENGTH)) "\\fR"
				s = substr(s, RSTART + RLENGTH)
			}
			o = o dash(s)
			if (o ~ /^[.\047]/)
				o = "\\&" o
			print o
		}'
}

# A help text without its usage lines (up to the first blank line), and
# those lines without "usage: " (continuation lines keep their indent
# beyond it).
body() { awk 'go; /^$/ { go = 1 }'; }
synopsis() { awk '/^$/ { exit } { sub(/^usage: /, ""); sub(/^       /, ""); print }'; }

page()
{
	version=$("$bin" --version | awk '{ print $2 }')
	top=$("$bin" --help)
	# Each command's help is read through a pipe, where its failure would
	# go unseen: make sure of the binary first.
	for c in $(helpopts_commands "$bin" | cut -f1); do
		"$bin" "$c" --help >/dev/null || {
			echo "manpage.sh: '$bin $c --help' failed" >&2
			exit 1
		}
	done
	[ -n "${c:-}" ] || {
		echo "manpage.sh: found no commands in '$bin --help'" >&2
		exit 1
	}

	cat <<EOF
.\\" Generated from 'mcpreel --help' and each 'mcpreel COMMAND --help' by
.\\" scripts/manpage.sh: do not edit.
.TH MCPREEL 1 "" "mcpreel $version" "User Commands"
.SH NAME
mcpreel \\- record and replay MCP traffic: a logging proxy for the Model Context Protocol
.SH SYNOPSIS
.nf
EOF
	{
		printf '%s\n' "$top" | synopsis
		helpopts_commands "$bin" | cut -f1 | while read -r c; do
			"$bin" "$c" --help | synopsis
		done
	} | roff | sed 's/^mcpreel /\\fBmcpreel\\fR /'
	cat <<EOF
.fi
.SH DESCRIPTION
.nf
EOF
	printf '%s\n' "$top" | body | roff
	cat <<EOF
.fi
.SH COMMANDS
EOF
	helpopts_commands "$bin" | cut -f1 | while read -r c; do
		printf '.SS "mcpreel %s"\n.nf\n' "$c"
		"$bin" "$c" --help | roff
		printf '.fi\n'
	done
	cat <<'EOF'
.SH EXIT STATUS
.TP
0
success
.TP
1
the command ran and found a problem (replay: differences or missing
responses; import: the file was refused)
.TP
2
bad arguments, or the command could not run
.PP
\fBmcpreel record\fR with a server command exits with the server's exit
status (128+N if signal N killed it, 127 if the command was not found).
.SH ENVIRONMENT
.TP
.B MCPREEL_DB
the database, when no \fB\-\-db\fR is given
.TP
.B XDG_DATA_HOME
the default database is \fI$XDG_DATA_HOME/mcpreel/mcpreel.db\fR (an
absolute path only), else under \fI$HOME/.local/share\fR
.SH FILES
.TP
.I ~/.local/share/mcpreel/mcpreel.db
the default database (SQLite, created mode 0600); \fBsqlite3\fR(1)
reads it too
.SH SEE ALSO
\fBsqlite3\fR(1)
EOF
}

# Written aside and moved into place, so a failed run leaves no file
# that looks up to date.
trap 'rm -f "$out.tmp"' EXIT
page >"$out.tmp"
mv "$out.tmp" "$out"
