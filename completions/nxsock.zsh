#compdef nxsock
# zsh completion for nxsock (install as _nxsock in a directory on $fpath).
# The completion code comes from the installed nxsock itself, so it always speaks the same protocol as the
# click that answers it.  Autoloaded on the first completion: define the completer, then complete.
eval "$(_NXSOCK_COMPLETE=zsh_source command nxsock 2>/dev/null)"
(( $+functions[_nxsock_completion] )) && _nxsock_completion "$@"
