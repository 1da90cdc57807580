# fish completion for redlock(1). Installed by make install into fish's
# vendor_completions.d; or copy it to ~/.config/fish/completions.
#
# The subcommands and options, and what each option's value is, come
# from "redlock --complete [SUBCOMMAND]" (one option a line: spelling,
# kind of value, description), read from the redlock in $PATH when fish
# loads this file: nothing here lists them.
#
# Lock names for status, queue and unlock come from the server: the held
# locks that "redlock status --json" lists (one object a line, "name"
# first), asked with the -u and TLS options already on the line, within
# 300ms to connect and 300ms a reply, and killed after 1s whatever
# happens, so a dead server costs at most a second. Names holding
# control characters are not offered, and neither are the names of free
# locks that only have waiters.

# The words of the line before the cursor, up to the subcommand: the
# options for the server. Prints the subcommand's index in $argv, or
# nothing when there is none yet.
function __redlock_sub_index
    set -l words (commandline -opc)
    set -l i 2
    while test $i -le (count $words)
        if contains -- $words[$i] $__redlock_gvalue
            set i (math $i + 2)
            continue
        end
        switch $words[$i]
            case '-*'
            case '*'
                echo $i
                return 0
        end
        set i (math $i + 1)
    end
    return 1
end

# True when no subcommand is on the line yet.
function __redlock_no_sub
    not __redlock_sub_index >/dev/null
end

# __redlock_sub SUB...: true when the subcommand is one of SUB.
function __redlock_sub
    set -l i (__redlock_sub_index); or return 1
    set -l words (commandline -opc)
    contains -- $words[$i] $argv
end

# True when the subcommand takes its NAME next: no word that is not an
# option (or an option's value) after it yet.
function __redlock_wants_name
    set -l i (__redlock_sub_index); or return 1
    set -l words (commandline -opc)
    set -l j (math $i + 1)
    while test $j -le (count $words)
        if contains -- $words[$j] $__redlock_value
            set j (math $j + 2)
            continue
        end
        switch $words[$j]
            case '-*'
            case '*'
                return 1
        end
        set j (math $j + 1)
    end
    return 0
end

# exec after NAME: "--" next, or COMMAND once "--" is there.
function __redlock_exec_wants_dashdash
    __redlock_sub exec; or return 1
    not __redlock_wants_name; or return 1
    not contains -- -- (commandline -opc)
end

function __redlock_exec_command
    set -l words (commandline -opc)
    set -l i (contains -i -- -- $words); or return 1
    __redlock_sub exec; or return 1
    __fish_complete_subcommand --commandline $words[(math $i + 1)..-1] (commandline -ct)
end

function __redlock_after_dashdash
    __redlock_sub exec; and contains -- -- (commandline -opc)
end

# The held lock names, asked with the connection options on the line.
function __redlock_names
    set -l words (commandline -opc)
    set -l i (__redlock_sub_index); or return
    set -l conn
    set -l j 2
    while test $j -lt $i
        set -l w $words[$j]
        if contains -- $w $__redlock_conn
            set -a conn $w $words[(math $j + 1)]
            set j (math $j + 1)
        else if contains -- $w $__redlock_gvalue
            set j (math $j + 1)
        else if not contains -- (string replace -r '=.*' '' -- $w) $__redlock_gvalue; or contains -- (string replace -r '=.*' '' -- $w) $__redlock_conn
            set -a conn $w
        end
        set j (math $j + 1)
    end
    # And those given after the subcommand (before NAME, so no words
    # but options there).
    set j (math $i + 1)
    while test $j -le (count $words)
        set -l w $words[$j]
        if contains -- $w $__redlock_conn
            set -a conn $w $words[(math $j + 1)]
            set j (math $j + 1)
        else if contains -- $w $__redlock_gflag; or contains -- (string replace -r '=.*' '' -- $w) $__redlock_conn
            set -a conn $w
        end
        set j (math $j + 1)
    end
    timeout -k 1 1 $words[1] --connect-timeout 300ms --reply-timeout 300ms $conn status --json 2>/dev/null </dev/null |
        sed -n 's/^ *{"name":"\(\([^"\\\\]\|\\\\["\\\\/]\)*\)",.*/\1/p' |
        sed 's/\\\\\(["\\\\/]\)/\1/g'
end

function __redlock_durations
    set -l cur (commandline -ct | string replace -r '^--?[a-z-]*=' '')
    if string match -qr '^[0-9]+(\.[0-9]*)?$' -- $cur
        printf '%s\n' {$cur}ms {$cur}s {$cur}m {$cur}h
    else
        printf '%s\n' 250ms 30s 5m 2h
    end
end

# __redlock_offer CONDITION LINE: complete the option of LINE, a line of
# "redlock --complete", when CONDITION holds; none without description.
function __redlock_offer -a cond line
    set -l f (string split \t -- $line)
    set -l w $f[1]
    set -l k $f[2]
    set -l d $f[3]
    test -n "$d"; or return
    set -l spell -l (string sub -s 3 -- $w)
    string match -q -- '--*' $w; or set spell -s (string sub -s 2 -- $w)
    switch $k
        case ''
            complete -c redlock -n $cond $spell -d $d
        case DURATION
            complete -c redlock -n $cond $spell -x -a '(__redlock_durations)' -d $d
        case FILE
            complete -c redlock -n $cond $spell -r -F -d $d
        case DIR
            complete -c redlock -n $cond $spell -x -a '(__fish_complete_directories)' -d $d
        case PID
            complete -c redlock -n $cond $spell -x -a '(__fish_complete_pids)' -d $d
        case HOST
            complete -c redlock -n $cond $spell -x -a '(__fish_print_hostnames)' -d $d
        case URL
            complete -c redlock -n $cond $spell -x -a 'redis:// rediss:// unix:/// redis+sentinel://' -d $d
        case '*|*'
            complete -c redlock -n $cond $spell -x -a (string replace -a '|' ' ' -- $k) -d $d
        case '[*]'
            # The value only as --NAME=VALUE.
            complete -c redlock -n $cond $spell -d $d
            complete -c redlock -n "$cond; and string match -q -- '$w=*' (commandline -ct)" $spell -x -a '(__redlock_durations)' -d $d
        case '*'
            complete -c redlock -n $cond $spell -x -d $d
    end
end

complete -c redlock -f

# Global options taking a value (__redlock_gvalue), those of them that
# reach the server (__redlock_conn, for the names), the global flags
# that do (__redlock_gflag), and every option taking a value
# (__redlock_value).
set -g __redlock_gvalue
set -g __redlock_conn
set -g __redlock_gflag
set -g __redlock_value
set -l rl (command -s redlock)
set -l subs
test -n "$rl"; and for line in ($rl --complete 2>/dev/null)
    set -l f (string split \t -- $line)
    if not string match -q -- '-*' $f[1]
        complete -c redlock -n __redlock_no_sub -a $f[1] -d $f[3]
        set -a subs $f[1]
        continue
    end
    if test -n "$f[2]"; and not string match -q -- '[*' $f[2]
        set -a __redlock_gvalue $f[1]
        set -a __redlock_value $f[1]
        test "$f[2]" = DURATION; or set -a __redlock_conn $f[1]
    else if test -z "$f[2]"; and not contains -- $f[1] -h --help -V --version
        set -a __redlock_gflag $f[1]
    end
    __redlock_offer __redlock_no_sub $line
end
for sub in $subs
    for line in ($rl --complete $sub 2>/dev/null)
        set -l f (string split \t -- $line)
        if test -n "$f[2]"; and not string match -q -- '[*' $f[2]
            set -a __redlock_value $f[1]
        end
        __redlock_offer "__redlock_sub $sub; and not __redlock_after_dashdash" $line
    end
end

# exec: "--" after NAME, then COMMAND.
complete -c redlock -n __redlock_exec_wants_dashdash -a -- -d 'COMMAND follows'
complete -c redlock -n __redlock_after_dashdash -x -a '(__redlock_exec_command)'
# unlock, status, queue and log: the held names.
complete -c redlock -n '__redlock_sub unlock status queue log; and __redlock_wants_name' -a '(__redlock_names)' -d 'Held lock'
