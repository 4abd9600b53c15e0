#!/bin/sh
# Write mcpreel's bash or zsh completion, generated from the binary's own
# --help (the build runs this, see CMakeLists.txt), so every command and
# long option it completes is one --help lists, and no other.
#   scripts/completions.sh bash|zsh MCPREEL OUT
# Both complete the commands, each command's long options, and after
# '--' (record, replay, mock) the server's command line; files elsewhere.
set -eu

shell=$1
bin=$2
out=$3
. "$(dirname "$0")/helpopts.sh"

commands=$(helpopts_commands "$bin" | cut -f1 | tr '\n' ' ')
commands=${commands% }
[ -n "$commands" ] || {
	echo "completions.sh: found no commands in '$bin --help'" >&2
	exit 1
}
global=$(helpopts_global "$bin" | tr '\n' ' ')
global=${global% }

# The case arms: one per command, its long options.
arms()
{
	for c in $commands; do
		printf '%s%s) %s="%s" ;;\n' "$1" "$c" "$2" \
		    "$(helpopts_options "$bin" "$c" | tr '\n' ' ' | sed 's/ $//')"
	done
}

bash_completion()
{
	cat <<EOF
# bash completion for mcpreel.  Generated from 'mcpreel --help' and each
# 'mcpreel COMMAND --help' by scripts/completions.sh: do not edit.

_mcpreel()
{
    local cur=\${COMP_WORDS[COMP_CWORD]} cmd='' opts i

    # The command is the first word that is not an option (nor the
    # argument of --log-file, a word of its own after '=' too: bash splits
    # there); after its '--' comes the server's command.
    for (( i = 1; i < COMP_CWORD; i++ )); do
        case \${COMP_WORDS[i]} in
        --)
            if [[ -n \$cmd ]]; then
                if (( i == COMP_CWORD - 1 )); then
                    mapfile -t COMPREPLY < <(compgen -c -- "\$cur")
                fi
                return
            fi ;;
        --log-file)
            [[ \${COMP_WORDS[i+1]} == = ]] && (( i++ ))
            (( i++ )) ;;
        -*) ;;
        *) [[ -z \$cmd ]] && cmd=\${COMP_WORDS[i]} ;;
        esac
    done

    if [[ -z \$cmd ]]; then
        if [[ \$cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "$global" -- "\$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$commands" -- "\$cur")
        fi
        return
    fi
    case \$cmd in
$(arms '    ' opts)
    *) return ;;
    esac
    if [[ \$cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "\$opts" -- "\$cur")
    fi
}
complete -o default -F _mcpreel mcpreel
EOF
}

# _describe's "name:summary" pairs, quoted for zsh.
zsh_commands()
{
	helpopts_commands "$bin" | awk -F '\t' '{
		gsub(/:/, "\\:", $2)
		gsub(/'\''/, "'\''\\'\'''\''", $2)
		printf "        '\''%s:%s'\''\n", $1, $2
	}'
}

zsh_completion()
{
	cat <<EOF
#compdef mcpreel
# zsh completion for mcpreel.  Generated from 'mcpreel --help' and each
# 'mcpreel COMMAND --help' by scripts/completions.sh: do not edit.

_mcpreel()
{
    local -a commands opts
    local cmd='' i

    commands=(
$(zsh_commands)
    )
    # The command is the first word that is not an option (nor the
    # argument of --log-file); after its '--' comes the server's command.
    for (( i = 2; i < CURRENT; i++ )); do
        case \${words[i]} in
        --)
            if [[ -n \$cmd ]]; then
                words=( "\${(@)words[i+1,-1]}" )
                (( CURRENT -= i ))
                _normal
                return
            fi ;;
        --log-file) (( i++ )) ;;
        -*) ;;
        *) [[ -z \$cmd ]] && cmd=\${words[i]} ;;
        esac
    done

    if [[ -z \$cmd ]]; then
        if [[ \${words[CURRENT]} == -* ]]; then
            compadd -- $global
        else
            _describe -t commands 'mcpreel command' commands
        fi
        return
    fi
    case \$cmd in
$(arms '    ' opts | sed 's/opts="\([^"]*\)"/opts=( \1 )/')
    *) return 1 ;;
    esac
    if [[ \${words[CURRENT]} == -* ]]; then
        compadd -- \$opts
    else
        _files
    fi
}

if [[ \$funcstack[1] == _mcpreel ]]; then
    _mcpreel "\$@"
else
    compdef _mcpreel mcpreel
fi
EOF
}

# Written aside and moved into place, so a failed run leaves no file
# that looks up to date.
trap 'rm -f "$out.tmp"' EXIT
case "$shell" in
bash) bash_completion >"$out.tmp" ;;
zsh) zsh_completion >"$out.tmp" ;;
*) echo "usage: scripts/completions.sh bash|zsh MCPREEL OUT" >&2; exit 2 ;;
esac
mv "$out.tmp" "$out"
