"""The only code that changes the disk: descriptor-based creation and removal, provisioning, tmpfiles, reset's cleanup,
and how an interrupted act ends."""
