# bash completion for swctl(8): swctl completion bash
#
# Completes commands, flags and their values, and the names of the bridges,
# trunks and interfaces the running daemon knows, by asking swctl itself
# ("swctl __complete -- WORD..."). Without a daemon it completes commands
# and flags only.

_swctl() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	local out
	out=$("${COMP_WORDS[0]}" __complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return 0
	COMPREPLY=()
	if [[ $out == ":files" ]]; then
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	elif [[ -n $out ]]; then
		mapfile -t COMPREPLY <<<"$out"
	fi
	return 0
}

complete -F _swctl swctl
