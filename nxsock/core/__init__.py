"""The pure core: the snapshot of the host, filesystem views, Nx's guards, the resolver, the release table, layout,
remedies and wording. Nothing here changes the disk, prints, or imports click or rich."""
