# Read mcpreel's commands and options out of its own --help, for the
# generated man page and shell completions (scripts/manpage.sh,
# scripts/completions.sh), so that they can never disagree with it.
# Sourced, not run.  Every function takes the binary as its first argument.

# The commands, one a line: NAME<TAB>SUMMARY (the "commands:" list of
# 'mcpreel --help').
helpopts_commands()
{
	"$1" --help | awk '
		/^commands:/ { on = 1; next }
		on && /^$/ { exit }
		on && /^  [a-z]/ {
			name = $1
			sub(/^  [a-z][a-z0-9-]* +/, "")
			printf "%s\t%s\n", name, $0
		}'
}

# The long options a help text (on stdin) defines, one a line, sorted:
# those in its usage lines (up to the first blank line), and those that
# begin a line, where an option is described ("  --db PATH   the
# database", "  -o, --output F  ...", "--json prints ...").  On such a
# line only the part before the description (two spaces) counts, so an
# option merely mentioned in a description is not taken for one.
helpopts_scan()
{
	awk '
		function take(s) {
			while (match(s, /--[a-z][a-z0-9-]*/)) {
				print substr(s, RSTART, RLENGTH)
				s = substr(s, RSTART + RLENGTH)
			}
		}
		NR == 1 { usage = 1 }
		usage && /^$/ { usage = 0 }
		usage { take($0); next }
		/^[ \t]*-/ {
			s = $0
			sub(/^[ \t]+/, "", s)
			if ((i = index(s, "  ")) > 0)
				s = substr(s, 1, i - 1)
			take(s)
		}' | sort -u
}

# The long options of the command itself ('mcpreel --help'), which every
# command takes too, except --version.
helpopts_global()
{
	{ "$1" --help | helpopts_scan; echo --help; } | sort -u
}

# The long options of command $2: its own (from 'mcpreel CMD --help')
# and the global ones but --version.
helpopts_options()
{
	{
		"$1" "$2" --help | helpopts_scan
		helpopts_global "$1" | grep -vx -e --version
	} | sort -u
}
