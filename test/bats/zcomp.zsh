#!/bin/zsh -f
# zcomp.zsh: what zsh's completion system offers for a command line,
# one match a line. An interactive zsh -f runs under zpty (completion
# widgets need a line editor) with compinit and the completion functions
# in FPATHDIR; Tab there runs a widget whose compadd writes each match it
# is given to a file, and then an end mark.
# usage: zsh -f zcomp.zsh FPATHDIR COMMAND-LINE
zmodload zsh/zpty || exit 1
dir=$1 line=$2
out=$(mktemp) || exit 1
init=$(mktemp) || exit 1
cat >$init <<INIT
PS1= PROMPT= RPROMPT=
fpath=(${(q)dir} \$fpath)
autoload -U compinit && compinit -u -D
zstyle ':completion:*' list-prompt ''
zstyle ':completion:*' select-prompt ''
compadd() {
  local -a hits
  local i a c
  # Calls that only fill arrays (-O, -A, -D) are not offers: look for
  # them among the options, up to "-" or "--" or the first match.
  for (( i = 1; i <= \$#; i++ )); do
    a=\${@[i]}
    [[ \$a == (-|--) || \$a != -* ]] && break
    [[ \$a == -o && \${@[i+1]} != -* ]] && { (( i++ )); continue }
    for (( c = 2; c <= \$#a; c++ )); do
      case \$a[c] in
      ([OAD]) builtin compadd "\$@"; return ;;
      ([PSpsiIWdJVXxFrRME]) (( c == \$#a )) && (( i++ )); break ;;
      esac
    done
  done
  builtin compadd -A hits "\$@"
  (( \$#hits )) && print -rl -- \$hits >>${(q)out}
  builtin compadd "\$@"
}
capture() { _main_complete; print -r -- '<end>' >>${(q)out}; }
zle -C capture complete-word capture
bindkey '^I' capture
print -r -- '<ready>' >>${(q)out}
INIT
zpty z zsh -f -i
zpty -w z "source ${(q)init}"
# wait_for MARK: poll the file for MARK, at most 5s.
wait_for() {
  local i
  for i in {1..500}; do grep -q $1 $out && return 0; sleep 0.01; done
  print -u2 "zcomp: no $1 from zsh after 5s"
  return 1
}
st=0
if wait_for '<ready>'; then
  : >$out
  zpty -w -n z "$line"$'\t'
  wait_for '<end>' || st=1
  grep -v '<end>' $out
else
  st=1
fi
zpty -d z
rm -f $out $init
exit $st
