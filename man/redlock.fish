# fish completion for redlock(1). Installed by make install into fish's
# vendor_completions.d; or copy it to ~/.config/fish/completions.
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
        switch $words[$i]
            case -u --url --connect-timeout --reply-timeout --timeout --cacert --cacertdir --cert --key --sni --sentinel-user --sentinel-password
                set i (math $i + 2)
                continue
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
        switch $words[$j]
            case --lines --owner --label -w --wait -t --ttl --limit --waiter-timeout --min-hold --replicas -E --conflict-exit-code --on-lost --kill-after --max-hold --metrics-file --pid --pubsub -c --command -u --url --connect-timeout --reply-timeout --timeout --cacert --cacertdir --cert --key --sni --sentinel-user --sentinel-password
                set j (math $j + 1)
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
        switch $words[$j]
            case --connect-timeout --reply-timeout --timeout
                set j (math $j + 1)
            case '--connect-timeout=*' '--reply-timeout=*' '--timeout=*'
            case -u --url --cacert --cacertdir --cert --key --sni --sentinel-user --sentinel-password
                set -a conn $words[$j] $words[(math $j + 1)]
                set j (math $j + 1)
            case '*'
                set -a conn $words[$j]
        end
        set j (math $j + 1)
    end
    # And those given after the subcommand (before NAME, so no words
    # but options there).
    set j (math $i + 1)
    while test $j -le (count $words)
        switch $words[$j]
            case -u --url --cacert --cacertdir --cert --key --sni --sentinel-user --sentinel-password
                set -a conn $words[$j] $words[(math $j + 1)]
                set j (math $j + 1)
            case '--url=*' '--cacert=*' '--cacertdir=*' '--cert=*' '--key=*' '--sni=*' '--sentinel-user=*' '--sentinel-password=*' --insecure
                set -a conn $words[$j]
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

complete -c redlock -f

# Global options and the subcommands.
set -l g '__redlock_no_sub'
complete -c redlock -n $g -s u -l url -x -d 'Redis URL (repeat: Redlock across masters)' -a 'redis:// rediss:// unix:/// redis+sentinel://'
complete -c redlock -n $g -l connect-timeout -x -d 'Give up connecting after DURATION' -a '(__redlock_durations)'
complete -c redlock -n $g -l reply-timeout -x -d 'Give up on a reply after DURATION' -a '(__redlock_durations)'
complete -c redlock -n $g -l sentinel-user -x -d 'ACL user for the sentinels'
complete -c redlock -n $g -l sentinel-password -x -d 'Password of the sentinels'
complete -c redlock -n $g -l cacert -r -F -d 'CA certificates to verify the server with'
complete -c redlock -n $g -l cacertdir -x -a '(__fish_complete_directories)' -d 'Directory of hashed CA certificates'
complete -c redlock -n $g -l cert -r -F -d 'Client certificate'
complete -c redlock -n $g -l key -r -F -d 'Private key of the client certificate'
complete -c redlock -n $g -l sni -x -a '(__fish_print_hostnames)' -d 'Server name to send and to verify'
complete -c redlock -n $g -l insecure -d 'Verify neither the certificate nor the name'
complete -c redlock -n $g -s h -l help -d 'Show the help'
complete -c redlock -n $g -s V -l version -d 'Print the version'
complete -c redlock -n $g -a exec -d 'Run COMMAND holding NAME'
complete -c redlock -n $g -a lock -d 'Acquire NAME and print the owner token'
complete -c redlock -n $g -a unlock -d 'Release one hold of NAME'
complete -c redlock -n $g -a status -d 'Who holds NAME, or every lock'
complete -c redlock -n $g -a queue -d 'The holder and the fair waiters of NAME'
complete -c redlock -n $g -a log -d 'The history of NAME'

# exec and lock.
set -l l '__redlock_sub exec lock; and not __redlock_after_dashdash'
set -l pubsub 'auto\t"Sharded on a Redis 7 cluster, else classic" sharded\t"SPUBLISH and SSUBSCRIBE" classic\t"PUBLISH and SUBSCRIBE"'
complete -c redlock -n $l -s w -l wait -x -a '(__redlock_durations)' -d 'Wait at most DURATION for NAME'
complete -c redlock -n $l -s n -l no-wait -d 'Give up at once if NAME is held'
complete -c redlock -n $l -l nonblock -d 'Give up at once if NAME is held (flock)'
complete -c redlock -n $l -l nb -d 'Give up at once if NAME is held (flock)'
complete -c redlock -n $l -s x -s e -l exclusive -d 'An exclusive lock, the default (flock)'
complete -c redlock -n $l -s t -l ttl -x -a '(__redlock_durations)' -d 'Lease'
complete -c redlock -n $l -l fair -d 'First come, first served'
complete -c redlock -n $l -s s -l shared -d 'A shared (read) lock'
complete -c redlock -n $l -l write -d 'The exclusive (write) lock of a read-write lock'
complete -c redlock -n $l -l limit -x -d 'At most N holders of NAME at once'
complete -c redlock -n $l -l waiter-timeout -x -a '(__redlock_durations)' -d 'How long a silent waiter keeps its place (--fair), or how often it refreshes it'
complete -c redlock -n $l -l min-hold -x -a '(__redlock_durations)' -d 'Hold NAME at least DURATION after acquiring it'
complete -c redlock -n $l -l replicas -x -d 'WAIT until N replicas have each acquisition'
complete -c redlock -n $l -l pubsub -x -a "$pubsub" -d 'How releases wake waiters'
complete -c redlock -n $l -s E -l conflict-exit-code -x -d 'Exit N, not 75, when NAME was not acquired'
complete -c redlock -n $l -l label -x -d 'Store and show TEXT instead of the command line'
complete -c redlock -n $l -l owner -x -d 'Acquire as TOKEN'
complete -c redlock -n $l -s q -l quiet -d 'No message when NAME is busy'
complete -c redlock -n $l -s v -l verbose -d 'Timestamped events on standard error'
complete -c redlock -n $l -s h -l help -d 'Show the help'
set -l e '__redlock_sub exec; and not __redlock_after_dashdash'
complete -c redlock -n $e -l on-lost -x -a 'term\t"SIGTERM, then SIGKILL" kill\tSIGKILL ignore\t"Only a warning"' -d 'When the lease is lost'
complete -c redlock -n $e -l kill-after -x -a '(__redlock_durations)' -d 'SIGKILL this long after SIGTERM'
complete -c redlock -n $e -l max-hold -x -a '(__redlock_durations)' -d 'Stop COMMAND once it has held NAME this long'
complete -c redlock -n $e -l metrics-file -r -F -d 'Record each run in FILE for node_exporter'
complete -c redlock -n $e -s c -l command -x -d 'Run STRING with /bin/sh -c as COMMAND'
complete -c redlock -n $e -s o -l close -d 'Accepted for flock; nothing to do'
complete -c redlock -n __redlock_exec_wants_dashdash -a -- -d 'COMMAND follows'
complete -c redlock -n __redlock_after_dashdash -x -a '(__redlock_exec_command)'
complete -c redlock -n '__redlock_sub lock' -l keepalive -d 'Renew the lease from a detached watchdog'
complete -c redlock -n '__redlock_sub lock' -l pid -x -a '(__fish_complete_pids)' -d 'With --keepalive: the process to outlive'

# unlock, status, queue.
complete -c redlock -n '__redlock_sub unlock' -l owner -x -d 'The token lock printed'
complete -c redlock -n '__redlock_sub unlock' -l force -d 'Delete NAME whoever holds it'
complete -c redlock -n '__redlock_sub unlock' -l pubsub -x -a "$pubsub" -d 'How the release wakes waiters'
complete -c redlock -n '__redlock_sub status queue log' -l json -d 'JSON output'
complete -c redlock -n '__redlock_sub log' -s n -l lines -x -d 'The last N events'
complete -c redlock -n '__redlock_sub log' -s f -l follow -d 'Then print new events as they come'
# --watch takes its INTERVAL only as --watch=INTERVAL.
complete -c redlock -n '__redlock_sub queue' -l watch -d 'Redraw every INTERVAL (--watch=INTERVAL)'
complete -c redlock -n '__redlock_sub queue; and string match -q -- "--watch=*" (commandline -ct)' -l watch -x -a '(__redlock_durations)' -d 'Interval'
complete -c redlock -n '__redlock_sub unlock status queue log' -s h -l help -d 'Show the help'
complete -c redlock -n '__redlock_sub unlock status queue log; and __redlock_wants_name' -a '(__redlock_names)' -d 'Held lock'
