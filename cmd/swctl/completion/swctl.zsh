#compdef swctl
# zsh completion for swctl(8): swctl completion zsh > "${fpath[1]}/_swctl"
#
# Completes commands, flags and their values, and the names of the bridges,
# trunks and interfaces the running daemon knows, by asking swctl itself
# ("swctl __complete -- WORD..."). Without a daemon it completes commands
# and flags only.

_swctl() {
	local -a out
	out=("${(@f)$(${words[1]} __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
	if [[ ${out[1]} == ":files" ]]; then
		_files
		return
	fi
	out=(${out:#})
	(( ${#out} )) && compadd -- "${out[@]}"
}

# Autoloaded from fpath, the file is the function's body; sourced, it
# registers the function.
if [[ ${funcstack[1]} == _swctl ]]; then
	_swctl "$@"
else
	compdef _swctl swctl
fi
