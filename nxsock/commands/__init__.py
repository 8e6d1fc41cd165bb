"""nxsock's subcommands: each parses its options, asks the library and hands the result to a renderer."""
