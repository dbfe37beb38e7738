# fish completion for swctl(8):
#   swctl completion fish > ~/.config/fish/completions/swctl.fish
#
# Completes commands, flags and their values, and the names of the bridges,
# trunks and interfaces the running daemon knows, by asking swctl itself
# ("swctl __complete -- WORD..."). Without a daemon it completes commands
# and flags only.

function __swctl_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    set -l rest
    if test (count $words) -gt 1
        set rest $words[2..-1]
    end
    set -l out ($words[1] __complete -- $rest $cur 2>/dev/null)
    if test "$out[1]" = ":files"
        __fish_complete_path $cur
        return
    end
    printf '%s\n' $out
end

complete -c swctl -f -a '(__swctl_complete)'
