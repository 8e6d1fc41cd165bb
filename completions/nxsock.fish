# fish completion for nxsock.
# The completion code comes from the installed nxsock itself, so it always speaks the same protocol as the
# click that answers it.
env _NXSOCK_COMPLETE=fish_source nxsock 2>/dev/null | source
